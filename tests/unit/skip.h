/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * skip() with its reason: tests/run lists a skipped test with the last
 * "[  SKIP    ]" line it printed. Included after cmocka.h.
 */
#ifndef LABELPROF_TEST_SKIP_H
#define LABELPROF_TEST_SKIP_H

#define skip_because(fmt, ...)                                                                     \
	do {                                                                                       \
		print_message("[  SKIP    ] " fmt "\n", ##__VA_ARGS__);                            \
		skip();                                                                            \
	} while (0)

#endif /* LABELPROF_TEST_SKIP_H */
