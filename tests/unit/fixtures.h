/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The TLS fixtures (tests/tls) live in tls/ next to the test binary. */
#ifndef LABELPROF_TEST_FIXTURES_H
#define LABELPROF_TEST_FIXTURES_H

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char fixture_dir[PATH_MAX - 256];

static inline int find_fixture_dir(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if (strlen(self) + sizeof("/tls") > sizeof(fixture_dir))
		return -1;
	strcpy(fixture_dir, self);
	strcat(fixture_dir, "/tls");
	return 0;
}

static inline const char *fixture_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", fixture_dir, name);
	return buf;
}

#endif /* LABELPROF_TEST_FIXTURES_H */
