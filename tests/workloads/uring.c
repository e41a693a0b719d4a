// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uring: a labelled main thread that keeps an IORING_SETUP_SQPOLL ring busy:
 * nops, which the ring's poll thread (iou-sqp-PID) takes from the queue, and
 * reads of /dev/zero with IOSQE_ASYNC, which io-wq workers (iou-wrk-PID)
 * serve. Both kinds of thread start with the main thread's thread pointer,
 * and neither sets a label. The process publishes an OpenTelemetry process
 * context, whose resource attributes are labels of every thread. The report
 * (JSON) gives the pid, the main thread's comm and labels, and the resource
 * attributes; "ready" goes to stderr once the ring runs.
 */
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "customlabels.h"
#include "workload.h"

#define COMM	   "uring-main"
#define NOPS	   16 /* per batch */
#define READS	   2  /* async reads per batch */
#define READ_SIZE  (1 << 20)
#define RING_DEPTH 64

static const struct custom_labels_otel_attr resource[] = {{"service.name", "uring-workload"}};
static const char *const key_map[] = {"unused"};

static struct {
	struct wl_run run;
	uint64_t iters_per_us;
} env;

static volatile uint64_t sink;

/* The main thread's own CPU between batches. */
static WL_BURN uint64_t burn_main(uint64_t iters, uint64_t x)
{
	return wl_spin(iters, x);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: uring [-d SEC] [-w] [-o FILE]\n");
}

static void write_report(void)
{
	FILE *f = wl_open_report(env.run.output);

	fprintf(f, "{\"workload\":\"uring\",\"pid\":%d,\"comm\":\"%s\",", (int)getpid(), COMM);
	fprintf(f, "\"labels\":{\"tenant\":\"main\"},\"resource\":{");
	wl_json_str(f, resource[0].key);
	fputc(':', f);
	wl_json_str(f, resource[0].value);
	fprintf(f, "}}\n");
	wl_close_report(f, env.run.output);
}

/* One batch: nops for the poll thread, async reads for io-wq; waits for them all. */
static void batch(struct io_uring *ring, int zero, char *bufs)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int i, n = 0, err;

	for (i = 0; i < NOPS + READS; i++) {
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			break;
		if (i < NOPS) {
			io_uring_prep_nop(sqe);
		} else {
			io_uring_prep_read(sqe, zero, bufs + (size_t)(i - NOPS) * READ_SIZE,
					   READ_SIZE, 0);
			io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		}
		n++;
	}
	err = io_uring_submit(ring);
	if (err < 0)
		wl_die("uring: io_uring_submit: %s", strerror(-err));
	while (n--) {
		err = io_uring_wait_cqe(ring, &cqe);
		if (err < 0)
			wl_die("uring: io_uring_wait_cqe: %s", strerror(-err));
		if (cqe->res < 0)
			wl_die("uring: an operation failed: %s", strerror(-cqe->res));
		io_uring_cqe_seen(ring, cqe);
	}
}

int main(int argc, char **argv)
{
	struct io_uring_params p = {.flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 1000};
	uint64_t x = 1, next_check = 0, start;
	struct io_uring ring;
	char *bufs;
	int c, err, zero;

	while ((c = getopt(argc, argv, "d:wo:h")) != -1)
		wl_run_option(&env.run, "uring", c, optarg, usage);
	wl_no_operands("uring", argc, argv);
	wl_install_stop_handlers();
	prctl(PR_SET_NAME, COMM);
	err = custom_labels_otel_publish(resource, 1, key_map, 1);
	if (err)
		wl_die("uring: custom_labels_otel_publish failed (%d)", err);
	/* before the ring: its threads start with this thread's TLS, labels and all */
	if (custom_labels_set_str("tenant", "main"))
		wl_die("uring: custom_labels_set_str failed");
	env.iters_per_us = wl_calibrate();
	zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	bufs = malloc((size_t)READS * READ_SIZE);
	if (zero < 0 || !bufs)
		wl_die("uring: cannot open /dev/zero or allocate buffers");
	err = io_uring_queue_init_params(RING_DEPTH, &ring, &p);
	if (err)
		wl_die("uring: io_uring_queue_init_params (SQPOLL): %s", strerror(-err));
	batch(&ring, zero, bufs);
	write_report();
	wl_ready("uring");
	start = wl_clock_ns(CLOCK_MONOTONIC);
	while (!wl_stopping()) {
		uint64_t now;

		batch(&ring, zero, bufs);
		x = burn_main(20 * env.iters_per_us, x);
		now = wl_clock_ns(CLOCK_MONOTONIC);
		if (env.run.duration > 0 && now - start >= env.run.duration * 1e9)
			break;
		/* stdin's end, every 50 ms */
		if (env.run.wait_stdin && now >= next_check) {
			if (wl_stdin_closed())
				break;
			next_check = now + 50000000;
		}
	}
	io_uring_queue_exit(&ring);
	free(bufs);
	close(zero);
	custom_labels_otel_unpublish();
	sink = x;
	return 0;
}
