// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * labelprof's sampler. On every cpu-clock tick on_sample takes a sample's way:
 * the filter, the kernel and user stacks, the interrupted thread's label set
 * (read from its memory by the recipe userspace made for its process), then
 * one record into the ring buffer. A header per concern:
 *
 *   filter.bpf.h         which processes are sampled
 *   stack_walk.bpf.h     the user stack: the dispatcher that asks who owns each frame
 *   walk.bpf.h           what every walker shares: the walk's state, reads, steps
 *   stack_native.bpf.h   native frames by the CFI rows of userspace's unwind tables
 *   stack_hotspot.bpf.h  Java frames in a HotSpot JVM's code cache
 *   stack_v8.bpf.h       JavaScript frames of V8, among the frames without CFI
 *   stack_fp.bpf.h       a user stack by its frame records alone (--unwind fp)
 *   stack_python.bpf.h   the Python frames of a thread, after its native ones
 *   labels.bpf.h         a thread's label set: its process's recipe, then each source
 *   labels_custom.bpf.h  custom labels
 *   labels_otel.bpf.h    the OpenTelemetry thread context
 *   labels_go.bpf.h      Go pprof labels
 *   tls.bpf.h            a thread's user memory; its thread pointer to a TLS object
 *   scratch.bpf.h        the per-CPU scratch a record is assembled in
 *   maps.bpf.h           what userspace sees through the skeleton: rodata, bss, maps
 *   iter.bpf.h           read_threads, the task iterator of `labelprof labels`
 *   lifecycle.bpf.h      on_exec, on_fork, on_exit: maps kept in step with processes
 *   core_fixes.bpf.h     the kernel differences bridged by CO-RE
 *
 * The steps of the walkers, the Python walk and the label readers are global
 * functions: the kernel verifies each once, alone, which keeps the load of
 * on_sample short. labelprof.h is the one header shared with userspace;
 * arch.h holds what differs per architecture.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "labelprof.h"
#include "arch.h"
#include "maps.bpf.h"
#include "filter.bpf.h"
#include "stack_walk.bpf.h"
#include "stack_python.bpf.h"
#include "labels.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* A process event about sample s's process, unless one went out less than interval ago. */
static __always_inline void hint(void *last_sent, __u64 interval, __u32 type,
				 const struct lp_sample *s, struct lp_counters *c)
{
	__u64 now = s->ktime_ns, *last = bpf_map_lookup_elem(last_sent, &s->tgid);
	struct lp_proc_event *e;

	if (last && now - *last < interval)
		return;
	bpf_map_update_elem(last_sent, &s->tgid, &now, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		c->event_drops++;
		return;
	}
	e->hdr.type = type;
	e->hdr.size = sizeof(*e);
	e->ktime_ns = now;
	e->tgid = s->tgid;
	e->tid = s->tid;
	__builtin_memcpy(e->comm, s->comm, sizeof(e->comm));
	/*
	 * Wake userspace now: the sooner it inspects, the fewer samples miss
	 * labels; the samples before it in the ring did not wake it.
	 */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, cpu = bpf_get_smp_processor_id();
	struct lp_counters *c;
	struct lp_scratch *sc;
	struct lp_recipe *r = NULL;
	struct lp_sample *s;
	__u32 off = sizeof(*s), flags;
	bool kthread;
	long n;

	if (!tgid) /* the idle task */
		return 0;
	c = get_counters();
	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!c || !sc)
		return 0;
	if (!passes_filter(tgid, sc)) {
		c->filtered++;
		return 0;
	}
	c->samples++;

	s = sample_init(sc, tgid, (__u32)pid_tgid, cpu);
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	flags = task->flags;
	kthread = flags & PF_KTHREAD;

	/* a sample of user mode has no kernel stack */
	if (kernel_stacks && !arch_user_mode(ctx)) {
		n = bpf_get_stack(ctx, &sc->rec[off], stack_depth * sizeof(__u64), 0);
		if (n > 0) {
			s->kstack_len = n / sizeof(__u64);
			off += n;
		} else if (n < 0) {
			s->status |= LP_ST_KSTACK_ERR;
		}
	}
	if (kthread) {
		c->kernel_threads++;
	} else {
		/* first: the user stack's walk takes the JVM's layout from it */
		r = sample_recipe(task, false, flags, sc, s, c);
		if (user_stacks) {
			n = user_stack(ctx, sc, r, off);
			if (n > 0 && n <= LP_MAX_USTACK_WORDS * sizeof(__u64)) {
				s->ustack_len = n / sizeof(__u64);
				off += n;
			} else if (n < 0) {
				s->status |= LP_ST_USTACK_ERR;
			}
		}
		if (r && r->py.interp_head && user_stacks)
			python_frames(sc, &r->py, s, &off);
		if (!read_labels)
			s->status |= LP_ST_LABELS_OFF;
		else if (r)
			off = sample_labels(sc, r, c, off);
	}

	if (s->status & LP_ST_READ_FAULT)
		c->label_read_faults++;
	if (s->status & LP_ST_TRUNCATED)
		c->truncations++;
	if (s->status & LP_ST_MALFORMED)
		c->malformed_labels++;
	if (s->label_count)
		c->samples_with_labels++;

	if (off > LP_RECORD_MAX)
		off = LP_RECORD_MAX;
	s->hdr.size = off;
	/*
	 * Waking userspace's reader per sample would cost more than sampling: it
	 * is woken once a quarter of the small ring is pending (docs/design.md
	 * section 4), and reads on a timer besides.
	 */
	if (bpf_ringbuf_output(&events, sc->rec, off,
			       bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) * 4 >
					       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE)
				       ? BPF_RB_FORCE_WAKEUP
				       : BPF_RB_NO_WAKEUP))
		c->ringbuf_drops++;

	/*
	 * Ask userspace to inspect the process: a tgid with no recipe, or without
	 * labels unless quiet, at most once a second; one whose code mappings
	 * changed since its recipe was made more often, since a label library
	 * may have just been loaded.
	 */
	if (kthread)
		return 0;
	if (s->status & LP_ST_MAPS_CHANGED)
		hint(&mapped, map_hint_interval_ns, LP_EVENT_EXEC_MAP, s, c);
	else if ((s->status & LP_ST_NO_RECIPE) && !(r && (r->flags & LP_RECIPE_QUIET)))
		hint(&hinted, hint_interval_ns, LP_EVENT_UNKNOWN_PID, s, c);
	return 0;
}

/* The object's other programs: they share the readers above. */
#include "iter.bpf.h"
#include "lifecycle.bpf.h"
