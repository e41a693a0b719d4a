// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* labelprof: which labels (tenant, endpoint, span, ...) burn the CPU. */
#include <argp.h>
#include <stdio.h>
#include <string.h>

#include "lib/compiler.h"
#include "cmd/commands.h"
#include "version.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"record", cmd_record,
	 "sample CPU stacks with the labels threads had set, write a profile"},
	{"convert", cmd_convert, "convert a saved profile (json, pprof, otlp) into another format"},
	{"top", cmd_top, "live CPU share per label value, with the hottest functions"},
	{"agent", cmd_agent, "continuous profiling daemon: profiles to files and OTLP, metrics"},
	{"labels", cmd_labels, "show the labels every thread of a process has set right now"},
	{"inspect", cmd_inspect, "say which label form a process or ELF file exposes, and where"},
};

#define COMMAND_COUNT ARRAY_SIZE(commands)

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: labelprof COMMAND [OPTION...]\n\nCommands:\n");
	for (i = 0; i < COMMAND_COUNT; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nlabelprof COMMAND --help describes a command's options; --version prints the "
		   "version.\n");
}

/* --version and -V, for labelprof and each command (argp) */
const char *argp_program_version = "labelprof " LABELPROF_VERSION;

int main(int argc, char **argv)
{
	static char prog[64];
	size_t i;

	/* usage errors exit 2 in every command, like the tools people script with */
	argp_err_exit_status = 2;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		puts(argp_program_version);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < COMMAND_COUNT; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		/* argp names the program after argv[0] in usage and errors */
		snprintf(prog, sizeof(prog), "labelprof %s", commands[i].name);
		argv[1] = prog;
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "labelprof: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
