// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * labelprof top: which label values burn the CPU right now, refreshed every
 * interval like top(1) and perf top. On a terminal it redraws the alternate
 * screen and quits on q; piped, it prints one plain snapshot per interval,
 * followed by a blank line, for scripts and tests.
 *
 * Shares are those of the last interval (what top does): each refresh takes
 * the session's profile, symbolizes it, groups it (top_view.h) and frees it,
 * then lets the symbolizer drop what exited processes held, so memory stays
 * flat. --cumulative shows everything since the start instead; that profile
 * keeps growing up to its memory limit and keeps exited processes' symbols.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "lib/clock.h"
#include "lib/msg.h"
#include "cli/cli.h"
#include "cmd/commands.h"
#include "format/labelfold.h"
#include "profile/labelsel.h"
#include "profile/profile.h"
#include "sampling/session.h"
#include "symbolize/symbols.h"
#include "profile/symprof.h"
#include "cmd/top_view.h"

/* A pipe has no size: snapshots are this wide and show this many rows. */
#define PIPE_WIDTH 160
#define PIPE_ROWS  100
/*
 * Screen lines that are not table rows: the header (3 and a blank line), the
 * column titles, and the last line, the key hints, written without a newline
 * so that the screen never scrolls.
 */
#define SCREEN_CHROME 6
/* Longest wait for records, so that a key press is seen quickly. */
#define POLL_MS 100

/*
 * Until q, the view takes the alternate screen, like top; with -n it draws on
 * the screen itself, so that the last refresh stays once the command is done.
 */
enum screen_mode {
	SCREEN_NONE,
	SCREEN_ALTERNATE,
	SCREEN_IN_PLACE,
};

static const char *const screen_enter[] = {
	[SCREEN_ALTERNATE] = "\033[?1049h\033[?25l", /* cursor hidden */
	[SCREEN_IN_PLACE] = "\033[H\033[2J\033[?25l",
};
static const char *const screen_leave[] = {
	[SCREEN_ALTERNATE] = "\033[?25h\033[?1049l",
	[SCREEN_IN_PLACE] = "\033[?25h",
};

#define SCREEN_HOME  "\033[H"
#define SCREEN_CLEAR "\033[J" /* below the cursor: what the last frame left */
/* Enough for a whole frame of a large screen in one write: no flicker. */
#define SCREEN_BUFFER (1 << 16)

struct top_env {
	struct sampling_args sampling;
	struct label_args labels;
	struct top_key keys[TOP_MAX_KEYS]; /* point into argv */
	size_t key_count;		   /* 0: the most common key */
	double interval_s;
	unsigned long long iterations; /* 0: until q, Ctrl-C or SIGTERM */
	bool cumulative;
};

/* Refresh interval: default and bounds, in seconds (printed by --help as written). */
#define TOP_DEFAULT_INTERVAL_S 1
#define TOP_MIN_INTERVAL_S     0.1
#define TOP_MAX_INTERVAL_S     3600

enum {
	OPT_BY = 0x100,
	OPT_INTERVAL,
	OPT_CUMULATIVE,
};

/* clang-format off */
static const char interval_doc[] = "Refresh this often, " __stringify(TOP_MIN_INTERVAL_S)
	" .. " __stringify(TOP_MAX_INTERVAL_S) " (default " __stringify(TOP_DEFAULT_INTERVAL_S) ")";
/* clang-format on */

static const struct argp_option top_options[] = {
	{"by", OPT_BY, "KEY[,KEY...]", 0,
	 "One row per value of KEY, or per combination of values of the KEYs, \"(not set)\" "
	 "for samples without one (default: the key most samples set, chosen once)",
	 0},
	{"interval", OPT_INTERVAL, "SECONDS", 0, interval_doc, 0},
	{"iterations", 'n', "N", 0, "Stop after N refreshes", 0},
	{"cumulative", OPT_CUMULATIVE, NULL, 0,
	 "Shares since the start instead of over the last interval", 0},
	{},
};

/*
 * The keys of list (comma-separated, modified) into keys (TOP_MAX_KEYS),
 * pointing into list. Returns 0, or -EINVAL with why (for --by or the b key).
 */
static int parse_keys(char *list, struct top_key *keys, size_t *count, char *why, size_t why_len)
{
	char *tok, *save = NULL;
	size_t i, len;

	*count = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		len = strlen(tok);
		if (len > LP_MAX_KEY_LEN) {
			snprintf(why, why_len, "label key '%.32s...' is longer than %d bytes", tok,
				 LP_MAX_KEY_LEN);
			return -EINVAL;
		}
		for (i = 0; i < *count; i++) {
			if (keys[i].len == len && !memcmp(keys[i].bytes, tok, len)) {
				snprintf(why, why_len, "label key '%s' given twice", tok);
				return -EINVAL;
			}
		}
		/* a row per request: record's pprof and OTLP outputs keep them */
		if (labelsel__is_trace_key(tok, len)) {
			snprintf(why, why_len,
				 "'%s' is a trace or span id, one value per request: record "
				 "--format otlp or pprof keeps it",
				 tok);
			return -EINVAL;
		}
		if (*count == TOP_MAX_KEYS) {
			snprintf(why, why_len, "at most %d label keys", TOP_MAX_KEYS);
			return -EINVAL;
		}
		keys[(*count)++] = (struct top_key){(const unsigned char *)tok, len};
	}
	return 0;
}

static error_t parse_by(struct top_env *env, char *arg, struct argp_state *state)
{
	char why[LP_MAX_KEY_LEN + 128];

	if (parse_keys(arg, env->keys, &env->key_count, why, sizeof(why)))
		argp_error(state, "--by: %s", why);
	if (!env->key_count)
		argp_error(state, "--by needs a label key");
	return 0;
}

static error_t parse_top_opt(int key, char *arg, struct argp_state *state)
{
	struct top_env *env = state->input;
	unsigned long long v;
	double d;
	char *end;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env->sampling;
		state->child_inputs[1] = &env->labels;
		break;
	case OPT_BY:
		return parse_by(env, arg, state);
	case OPT_INTERVAL:
		d = strtod(arg, &end);
		if (end == arg || *end || !(d >= TOP_MIN_INTERVAL_S) || d > TOP_MAX_INTERVAL_S)
			argp_error(state, "--interval: invalid interval '%s' (%g .. %g seconds)",
				   arg, TOP_MIN_INTERVAL_S, (double)TOP_MAX_INTERVAL_S);
		env->interval_s = d;
		break;
	case 'n':
		if (cli_parse_uint(arg, ~0ull, &v) || !v)
			argp_error(state, "--iterations: invalid number of refreshes '%s'", arg);
		env->iterations = v;
		break;
	case OPT_CUMULATIVE:
		env->cumulative = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- the terminal ---------------------------------------------------------- */

static volatile sig_atomic_t resized;
/* What was changed, so that any exit (signals included) undoes exactly that. */
static volatile sig_atomic_t term_raw, term_screen; /* term_screen: enum screen_mode */
static struct termios saved_tio, raw_tio;

static void put_raw(const char *s)
{
	ssize_t n = write(STDOUT_FILENO, s, strlen(s));

	(void)n; /* nothing better to do on a terminal that is gone */
}

/* Async-signal-safe: signal handlers call it. */
static void term_leave(void)
{
	int saved_errno = errno;

	if (term_screen)
		put_raw(screen_leave[term_screen]);
	if (term_raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
	errno = saved_errno;
}

static void term_reenter(void)
{
	int saved_errno = errno;

	if (term_raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &raw_tio);
	if (term_screen)
		put_raw(screen_enter[term_screen]);
	errno = saved_errno;
}

static void on_winch(int sig)
{
	resized = 1;
}

/* Ctrl-Z: give the shell its terminal back while stopped, take it again after fg. */
static void on_tstp(int sig)
{
	term_leave();
	raise(SIGSTOP);
	term_reenter();
	resized = 1;
}

/* A crash: restore the terminal, then die of the same signal (SA_RESETHAND). */
static void on_fatal(int sig)
{
	term_leave();
	raise(sig);
}

/* Beside the session's SIGINT and SIGTERM, which stop it. */
static void install_signals(bool tty)
{
	static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	struct sigaction sa = {.sa_handler = SIG_IGN};
	size_t i;

	/* a reader that went away (| head) is seen as EPIPE */
	sigaction(SIGPIPE, &sa, NULL);
	if (!tty)
		return;
	sa.sa_handler = on_winch;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (i = 0; i < ARRAY_SIZE(fatal_sigs); i++)
		sigaction(fatal_sigs[i], &sa, NULL);
}

/*
 * The screen on stdout, and on stdin (when a terminal too) keys without echo
 * or line editing; signals stay on so Ctrl-C still interrupts.
 */
static int term_setup(bool keys, enum screen_mode mode)
{
	static char frame_buf[SCREEN_BUFFER];

	/* before any output: a frame goes out in one write, not line by line */
	if (setvbuf(stdout, frame_buf, _IOFBF, sizeof(frame_buf)))
		return -EINVAL;
	if (keys) {
		if (tcgetattr(STDIN_FILENO, &saved_tio))
			return -errno;
		raw_tio = saved_tio;
		raw_tio.c_lflag &= ~(ICANON | ECHO);
		raw_tio.c_cc[VMIN] = 0; /* read() returns at once, with what was typed */
		raw_tio.c_cc[VTIME] = 0;
		if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw_tio))
			return -errno;
		term_raw = 1;
	}
	put_raw(screen_enter[mode]);
	term_screen = mode;
	return 0;
}

static void term_restore(void)
{
	fflush(stdout);
	term_leave();
	term_raw = 0;
	term_screen = SCREEN_NONE;
}

static const char *const help_lines[] = {
	"labelprof top: help",
	"",
	"Each row is one value of the label key chosen with --by (or one combination",
	"of values of several keys): its share of the samples of the last interval",
	"and the functions that ran most in it (self time). \"(not set)\" gathers the",
	"samples that do not set the key.",
	"",
	"  h, ?   this help; any key returns",
	"  q      quit (Ctrl-C too)",
	"  space  pause: the table stays as it is until space again",
	"  s      sort by share, then by value, and back",
	"  b      group by other keys: type KEY[,KEY...] and Enter (empty: the",
	"         most common key); Esc cancels",
	"  p      one process only: type its PID and Enter (empty: every process)",
	"",
	/* clang-format off */
	"A key with more values than --max-label-values (default "
		__stringify(CLI_DEFAULT_MAX_LABEL_VALUES) ") in a refresh,",
	/* clang-format on */
	"a request id say, shows as one row KEY=*; trace and span ids are no rows.",
	"",
	"On the command line: --by KEY[,KEY...] chooses the rows, --interval the",
	"refresh, --cumulative shows shares since the start, -p PID and --cgroup",
	"choose what is sampled (labelprof top --help).",
};

/* ---- refreshing -------------------------------------------------------------- */

struct top_state {
	struct top_env *env;
	struct session *s;
	bool tty, color;
	struct symprof *sp; /* what view shows */
	struct top_view view;
	struct top_status status;
	bool help;		 /* h: the help screen instead of the table */
	enum top_sort sort;	 /* s */
	__u32 pid;		 /* p: only this process's samples; 0: every process */
	/* b and p: what is being typed on the last line */
	enum { PROMPT_NONE, PROMPT_BY, PROMPT_PID } prompt;
	char input[TOP_MAX_KEYS * (LP_MAX_KEY_LEN + 1)];
	size_t input_len;
	/* the keys typed with b: env->keys point into one, the next are read into the other */
	char by[2][TOP_MAX_KEYS * (LP_MAX_KEY_LEN + 1)];
	unsigned int by_current;
	char message[LP_MAX_KEY_LEN + 128]; /* why an input was refused, until the next key */
	struct lp_counters last; /* at the previous refresh */
	__u64 start_ns, last_ns;
	/* without --by: the most common key, chosen once so that rows do not jump */
	unsigned char auto_bytes[LP_MAX_KEY_LEN];
	struct top_key auto_key;
	bool have_auto_key;
	bool targets_exited; /* -p: why the run ended */
};

/* The help, as many lines as fit above the hints. */
static void print_help(unsigned int width, unsigned int lines)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(help_lines) && i + 1 < lines; i++)
		printf("%.*s\033[K\n", (int)width, help_lines[i]);
}

static const char *const prompts[] = {
	[PROMPT_BY] = "group by KEY[,KEY...] (empty: the most common; Esc cancels): ",
	[PROMPT_PID] = "only PID (empty: every process; Esc cancels): ",
};

/* The last line of the screen: the keys there are, or what is being typed. */
static void print_hints(const struct top_state *st, unsigned int width, unsigned int row)
{
	const char *hints = st->help ? "any key: back  q quit"
				     : "q quit  h help  space pause  s sort  b by  p pid";

	printf("\033[%u;1H%s", row, st->color ? "\033[7m" : "");
	if (st->prompt) {
		/* what is typed is shown as typed: printable ASCII only (on_key) */
		printf("%.*s%.*s_", (int)width, prompts[st->prompt],
		       (int)(width > strlen(prompts[st->prompt]) + 1
				     ? width - strlen(prompts[st->prompt]) - 1
				     : 0),
		       st->input);
	} else {
		printf("%.*s", (int)width, st->message[0] ? st->message : hints);
	}
	printf("%s\033[K", st->color ? "\033[0m" : "");
}

static int render(struct top_state *st)
{
	struct top_layout l = {.width = PIPE_WIDTH, .max_rows = PIPE_ROWS, .color = st->color};
	unsigned int rows = 24;
	struct winsize ws;
	int err = 0;

	if (st->tty) {
		l.erase = true;
		l.width = 80;
		if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col && ws.ws_row) {
			l.width = ws.ws_col;
			rows = ws.ws_row;
		}
		l.max_rows = rows > SCREEN_CHROME ? rows - SCREEN_CHROME : 0;
		fputs(SCREEN_HOME, stdout);
	}
	if (st->help)
		print_help(l.width, rows);
	else
		err = top_view__print(stdout, &st->view, &st->status, &l);
	fputs(st->tty ? SCREEN_CLEAR : "\n", stdout);
	if (st->tty)
		print_hints(st, l.width, rows);
	/* a write that failed fails again here, and says why (EPIPE: the reader left) */
	if (fflush(stdout))
		return -errno;
	return err;
}

/* The keys of the next view: those asked for, or the most common one once seen. */
static int view_keys(struct top_state *st, const struct symprof *sp,
		     const struct labelfold *fold, const struct top_key **keys, size_t *n)
{
	long len;

	*keys = st->env->keys;
	*n = st->env->key_count;
	st->status.auto_key = !*n;
	if (*n)
		return 0;
	if (!st->have_auto_key) {
		len = top_view__common_key(sp, fold, st->auto_bytes, sizeof(st->auto_bytes));
		if (len == -ENOMEM)
			return -ENOMEM;
		if (len >= 0) {
			st->auto_key = (struct top_key){st->auto_bytes, len};
			st->have_auto_key = true;
		}
	}
	*keys = &st->auto_key;
	*n = st->have_auto_key;
	return 0;
}

/* Shows sp (which st owns from now on) grouped as the keys, p and s say. */
static int show(struct top_state *st, struct symprof *sp)
{
	struct top_view view;
	struct labelfold fold;
	const struct top_key *keys;
	size_t n;
	int err;

	/* the same folding as report and html, over what this refresh shows */
	err = labelfold__init(&fold, sp, st->env->labels.max_values);
	if (!err)
		err = view_keys(st, sp, &fold, &keys, &n);
	if (!err)
		err = top_view__build(&view, sp, keys, n, &fold, st->pid);
	labelfold__free(&fold);
	if (err) {
		if (sp != st->sp)
			symprof__free(sp);
		return err;
	}
	top_view__sort(&view, st->sort);
	top_view__free(&st->view);
	if (sp != st->sp)
		symprof__free(st->sp);
	st->sp = sp;
	st->view = view;
	return 0;
}

/* Takes what was sampled since the last refresh and shows it. */
static int refresh(struct top_state *st)
{
	struct top_env *env = st->env;
	struct symprof_build_opts bo = {.frequency_hz = env->sampling.opts.freq_hz};
	struct lp_counters c;
	struct profile *p;
	struct symprof *sp;
	__u64 t0 = now_ns();
	int err;

	p = env->cumulative ? st->s->profile : session__take_profile(st->s);
	if (!p)
		return -ENOMEM;
	/* unreadable counters count nothing new, rather than going backwards */
	if (sampler__read_counters(st->s->sampler, &c))
		c = st->last;
	bo.counters = &c;
	sp = symprof__from_profile(p, st->s->symbolizer, &bo);
	if (!env->cumulative)
		profile__free(p);
	if (!sp)
		return -ENOMEM;
	sampling_args__note_sources(&env->sampling, sp);
	err = show(st, sp);
	if (err)
		return err;
	/* snapshots of exited processes: the interval that needed them is shown */
	if (!env->cumulative)
		symbolizer__release_unused(st->s->symbolizer);

	st->status.refresh_ms = (now_ns() - t0) / 1e6;
	st->status.elapsed_s = (t0 - st->start_ns) / 1e9;
	st->status.interval_s = (t0 - (env->cumulative ? st->start_ns : st->last_ns)) / 1e9;
	st->status.ringbuf_drops = c.ringbuf_drops - (env->cumulative ? 0 : st->last.ringbuf_drops);
	st->status.read_faults =
		c.label_read_faults - (env->cumulative ? 0 : st->last.label_read_faults);
	st->last = c;
	st->last_ns = t0;
	return render(st);
}

/*
 * -p: whether every target has exited. The exit event of a single target says
 * so at once; several are looked up, a zombie not yet reaped counting as gone
 * (as in record).
 */
static bool targets_gone(struct session *s, const struct sampling_args *args)
{
	bool exited = s->target_exited;

	s->target_exited = false;
	if (!args->opts.pid_count)
		return false;
	if (args->opts.pid_count == 1 && exited)
		return true;
	return !sampling_args__any_alive(args);
}

/* Enter on a prompt: the keys or the pid typed. Returns 0 or -ENOMEM. */
static int apply_input(struct top_state *st)
{
	struct top_env *env = st->env;
	unsigned long long pid;
	char why[sizeof(st->message) - 8];

	struct top_key keys[TOP_MAX_KEYS];
	char *by = st->by[!st->by_current];
	size_t n;

	if (st->prompt == PROMPT_BY) {
		memcpy(by, st->input, st->input_len + 1);
		if (parse_keys(by, keys, &n, why, sizeof(why))) {
			/* the keys shown stay */
			snprintf(st->message, sizeof(st->message), "by: %s", why);
		} else {
			memcpy(env->keys, keys, sizeof(keys));
			env->key_count = n;
			st->by_current = !st->by_current;
			/* no key: the most common one, chosen again */
			st->have_auto_key = false;
		}
	} else if (!st->input_len) {
		st->pid = 0;
	} else if (cli_parse_uint(st->input, INT_MAX, &pid) || !pid) {
		snprintf(st->message, sizeof(st->message), "not a pid: '%s'", st->input);
	} else {
		st->pid = pid;
	}
	st->prompt = PROMPT_NONE;
	return st->sp ? show(st, st->sp) : 0;
}

/* One key typed; sets *quit on q. Returns 0 or -ENOMEM. */
static int on_key(struct top_state *st, unsigned char c, bool *quit)
{
	resized = 1; /* whatever it did is redrawn at once */
	st->message[0] = '\0';
	if (st->prompt) {
		if (c == '\n' || c == '\r')
			return apply_input(st);
		if (c == 033) {
			st->prompt = PROMPT_NONE;
		} else if ((c == 0x7f || c == '\b') && st->input_len) {
			st->input[--st->input_len] = '\0';
		} else if (c >= 0x20 && c < 0x7f && st->input_len + 1 < sizeof(st->input)) {
			st->input[st->input_len++] = c;
			st->input[st->input_len] = '\0';
		}
		return 0;
	}
	if (c == 'q' || c == 'Q') {
		*quit = true;
	} else if (st->help) {
		st->help = false;
	} else if (c == 'h' || c == 'H' || c == '?') {
		st->help = true;
	} else if (c == ' ') {
		st->status.paused = !st->status.paused;
	} else if (c == 's' || c == 'S') {
		st->sort = (st->sort + 1) % TOP_SORT_COUNT;
		top_view__sort(&st->view, st->sort);
	} else if (c == 'b' || c == 'B' || c == 'p' || c == 'P') {
		st->prompt = c == 'b' || c == 'B' ? PROMPT_BY : PROMPT_PID;
		st->input_len = 0;
		st->input[0] = '\0';
	}
	return 0;
}

/* What was typed since the last call. Returns 0 or -ENOMEM. */
static int read_keys(struct top_state *st, bool *quit)
{
	unsigned char buf[64];
	ssize_t n, i;
	int err;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n && !*quit; i++) {
			err = on_key(st, buf[i], quit);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Returns 0 or -errno with a message in err (shown once the terminal is restored). */
static int run(struct top_state *st, char *errbuf, size_t errlen)
{
	const struct top_env *env = st->env;
	__u64 interval_ns = env->interval_s * 1e9, next_ns, now;
	unsigned long long refreshes = 0;
	bool keys = st->tty && isatty(STDIN_FILENO), quit = false;
	int err, timeout;

	if (st->tty) {
		err = term_setup(keys, env->iterations ? SCREEN_IN_PLACE : SCREEN_ALTERNATE);
		if (err) {
			snprintf(errbuf, errlen, "cannot set up the terminal: %s", strerror(-err));
			return err;
		}
	}
	st->start_ns = st->last_ns = now_ns();
	next_ns = st->start_ns + interval_ns;
	while (!session__stop_requested()) {
		now = now_ns();
		timeout = next_ns > now ? (next_ns - now + 999999) / 1000000 : 0;
		err = session__poll(st->s, timeout < POLL_MS ? timeout : POLL_MS);
		if (err < 0 && err != -EINTR) {
			snprintf(errbuf, errlen, "reading the ring buffer: %s", strerror(-err));
			return err;
		}
		err = keys ? read_keys(st, &quit) : 0;
		if (err) {
			snprintf(errbuf, errlen, "out of memory while regrouping");
			return err;
		}
		if (quit)
			break;
		if (st->s->target_exited && targets_gone(st->s, &env->sampling)) {
			st->targets_exited = true;
			return 0;
		}
		if (resized && (st->sp || st->help)) {
			resized = 0;
			err = render(st);
			if (err)
				goto out_write;
		}
		now = now_ns();
		/* paused: what is sampled meanwhile shows at the first refresh after */
		if (now < next_ns || st->status.paused)
			continue;
		err = refresh(st);
		if (err == -ENOMEM) {
			snprintf(errbuf, errlen, "out of memory while refreshing");
			return err;
		}
		if (err)
			goto out_write;
		if (env->iterations && ++refreshes >= env->iterations)
			break;
		/* once per refresh: targets reaped since their exit event */
		if (targets_gone(st->s, &env->sampling)) {
			st->targets_exited = true;
			return 0;
		}
		/* a refresh slower than the interval skips beats rather than piling up */
		next_ns += interval_ns;
		now = now_ns();
		if (next_ns <= now)
			next_ns = now + interval_ns;
	}
	return 0;

out_write:
	/* a reader that went away (| head) ends the run, and is no failure */
	if (err == -EPIPE)
		return 0;
	snprintf(errbuf, errlen, "writing to standard output: %s", strerror(-err));
	return err;
}

int cmd_top(int argc, char **argv)
{
	static struct top_env env = {
		.sampling = {.opts = SAMPLER_OPTS_INIT(SAMPLER_DEFAULT_FREQ_HZ)},
		.interval_s = TOP_DEFAULT_INTERVAL_S,
	};
	static const struct argp_child children[] = {
		{&sampling_argp, 0, "What to sample:", 1},
		{&label_argp, 0, "Which labels:", 2},
		{},
	};
	static const struct argp argp = {
		.options = top_options,
		.parser = parse_top_opt,
		.doc = "Shows live which label values (or combinations of them) use the CPU, "
		       "with their hottest functions, refreshed every interval. q or Ctrl-C "
		       "quits, h shows a help; space pauses, s sorts by share or by value, b "
		       "groups by other keys, p shows one process. Piped, prints one snapshot per "
		       "interval, each followed by a blank line. NO_COLOR=1 turns colours off.",
		.children = children,
	};
	struct top_state st = {.env = &env};
	const char *no_color = getenv("NO_COLOR");
	/* like top(1): a hangup or SIGQUIT quits too */
	static const int quit_sigs[] = {SIGHUP, SIGQUIT, 0};
	/* the first refresh comes on time and covers one interval */
	struct session_opts sopts = {
		.preload_kernel_symbols = true,
		.stop_signals = quit_sigs,
	};
	char errbuf[512];
	int err;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	st.tty = isatty(STDOUT_FILENO);
	st.color = st.tty && !(no_color && *no_color);
	st.status.freq_hz = env.sampling.opts.freq_hz;
	st.status.cumulative = env.cumulative;

	sopts.labels = env.labels.sel;
	st.s = session__begin(&env.sampling.opts, &sopts, errbuf, sizeof(errbuf));
	if (!st.s) {
		fprintf(stderr, "labelprof: %s\n", errbuf);
		return 1;
	}
	/* handlers first: a signal must find the terminal state it may have to undo */
	install_signals(st.tty);
	fprintf(stderr, "labelprof: sampling %d CPU%s at %u Hz\n",
		sampler__cpu_count(st.s->sampler), msg__s(sampler__cpu_count(st.s->sampler)),
		env.sampling.opts.freq_hz);

	err = run(&st, errbuf, sizeof(errbuf));
	term_restore();
	if (err)
		fprintf(stderr, "labelprof: %s\n", errbuf);
	else if (st.targets_exited)
		fprintf(stderr, "labelprof: the profiled processes exited\n");
	/* from what the refreshes showed: a label library may have come later (dlopen) */
	sampling_args__warn_unlabelled(&env.sampling, st.s->registry);
	top_view__free(&st.view);
	symprof__free(st.sp);
	session__close(st.s);
	labelsel__free(env.labels.sel);
	return err ? 1 : 0;
}
