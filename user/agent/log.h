/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's log: one line per event on stderr, which systemd hands to the
 * journal. When stderr is the journal's stream, lines carry a "<N>" priority
 * prefix (sd-daemon(3)) so that `journalctl -p warning` filters them.
 * Thread-safe (one stdio call per line).
 */
#ifndef LABELPROF_AGENT_LOG_H
#define LABELPROF_AGENT_LOG_H

#include <syslog.h>

/* prio: LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO. */
void agent_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* LABELPROF_AGENT_LOG_H */
