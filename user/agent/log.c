// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's log (log.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/log.h"

/* Whether stderr is the stream $JOURNAL_STREAM ("DEV:INODE") names, as systemd.exec(5) says. */
static bool stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	       st.st_dev == dev && st.st_ino == ino;
}

void agent_log(int prio, const char *fmt, ...)
{
	static int journal = -1;
	char line[1024], *p;
	va_list ap;

	if (journal < 0)
		__atomic_store_n(&journal, stderr_is_journal(), __ATOMIC_RELAXED);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one event, one line, whatever a path or a server's message holds */
	for (p = line; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (__atomic_load_n(&journal, __ATOMIC_RELAXED))
		fprintf(stderr, "<%d>labelprof: %s\n", prio, line);
	else
		fprintf(stderr, "labelprof: %s\n", line);
}
