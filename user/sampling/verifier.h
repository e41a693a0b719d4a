/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the kernel's verifier spent on each program of a BPF object: its
 * statistics log (BPF_LOG_STATS), kept while the object loads. The log
 * replaces the one libbpf would take after a failure, so it is armed only
 * where the figures are asked for (record -v).
 */
#ifndef LABELPROF_VERIFIER_H
#define LABELPROF_VERIFIER_H

#include <stdio.h>

struct bpf_object;
struct verifier_log;

/* Keeps the statistics of every program obj will load; NULL without memory. */
struct verifier_log *verifier_log__arm(struct bpf_object *obj);
/*
 * After the load: the time and instructions of each program, and their sum,
 * one line to f. The total verification time in microseconds is returned.
 */
unsigned long long verifier_log__print(const struct verifier_log *vl, FILE *f);
void verifier_log__free(struct verifier_log *vl);

#endif /* LABELPROF_VERIFIER_H */
