// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* labelprof inspect: which label form a process or an ELF file exposes, and where. */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "cli/cli.h"
#include "cmd/commands.h"
#include "sampling/features.h"
#include "format/fmt.h"
#include "lib/elf.h"
#include "proc/linked.h"
#include "proc/otel_ctx.h"
#include "proc/root.h"
#include "proc/maps.h"
#include "proc/stat.h"
#include "proc/tls.h"
#include "registry/registry.h"
#include "sampling/probe.h"

struct inspect_env {
	const char *target;
	pid_t pid; /* 0: target is a file */
	bool json;
	bool system;
	unsigned int verbose; /* -v given this often */
};

enum {
	OPT_JSON = 0x100,
	OPT_SYSTEM,
};

static const struct argp_option inspect_options[] = {
	{"json", OPT_JSON, NULL, 0, "Write one JSON object instead of text", 0},
	{"system", OPT_SYSTEM, NULL, 0,
	 "Check the kernel features labelprof uses instead of a process or file", 0},
	{"verbose", 'v', NULL, 0, "With --system, twice (-vv): libbpf's own messages", 0},
	{},
};

static error_t parse_inspect_opt(int key, char *arg, struct argp_state *state)
{
	struct inspect_env *env = state->input;
	unsigned long long v;

	switch (key) {
	case OPT_JSON:
		env->json = true;
		break;
	case OPT_SYSTEM:
		env->system = true;
		break;
	case 'v':
		env->verbose++;
		break;
	case ARGP_KEY_ARG:
		if (env->system)
			argp_error(state, "--system takes no PID or FILE");
		if (state->arg_num)
			argp_error(state, "one PID or FILE only");
		env->target = arg;
		/* digits only name a process; ./123 names a file */
		if (!cli_parse_uint(arg, INT_MAX, &v)) {
			if (!v)
				argp_error(state, "invalid pid '%s'", arg);
			env->pid = v;
		}
		break;
	case ARGP_KEY_END:
		if (!env->target && !env->system)
			argp_error(state, "a PID or FILE (or --system) is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char *const symbol_names[] = {
	[LP_FORM_CUSTOM_LABELS_V0] = "custom_labels_thread_local_data",
	[LP_FORM_CUSTOM_LABELS_V1] = "custom_labels_current_set",
};

static const char *const libc_names[] = {
	[TLS_LIBC_GLIBC] = "glibc",
	[TLS_LIBC_MUSL] = "musl",
};

static const char *const case_names[] = {
	[TLS_CASE_EXE_STATIC] = "exe_static",
	[TLS_CASE_TLSDESC_STATIC] = "tlsdesc_static",
	[TLS_CASE_TLSDESC_DYNAMIC] = "tlsdesc_dynamic",
	[TLS_CASE_TPOFF] = "initial_exec",
	[TLS_CASE_DTPMOD] = "general_dynamic",
	[TLS_CASE_TLSDESC_PENDING] = "tlsdesc_pending",
};

static const char *const access_names[] = {
	[LP_TLS_TP_OFFSET] = "tp_offset",
	[LP_TLS_DTV] = "dtv",
	[LP_TLS_TLSDESC] = "tlsdesc",
};

#define NAME(table, i) ((i) < ARRAY_SIZE(table) ? table[i] : NULL)

/* How the file's own code reaches the label object: JSON word, then words for people. */
struct tls_model {
	const char *word;
	const char *text;
};

static struct tls_model file_tls_model(const struct tls_file_info *info)
{
	static const struct {
		__u32 kind;
		struct tls_model model;
	} by_reloc[] = {
		/* the order the custom labels source tries them in */
		{TLS_RELOC_TLSDESC, {"tlsdesc", "TLSDESC (a descriptor the loader resolves)"}},
		{TLS_RELOC_TPOFF, {"initial_exec", "initial-exec (an offset from tp in the GOT)"}},
		{TLS_RELOC_DTPMOD,
		 {"general_dynamic", "general dynamic (module id and offset in the GOT)"}},
	};
	size_t k;
	__u32 i;

	if (info->is_exe)
		return (struct tls_model){"static",
					  "static offset (the executable's own TLS block)"};
	for (k = 0; k < ARRAY_SIZE(by_reloc); k++)
		for (i = 0; i < info->nr_relocs; i++)
			if (info->relocs[i].kind == by_reloc[k].kind)
				return by_reloc[k].model;
	return (struct tls_model){NULL, "none: no TLS relocation of the label symbol"};
}

/* Why a file publishes no labels (info->form is NONE). */
static void no_labels_reason(const struct tls_file_info *info, char *buf, size_t len)
{
	if (!info->has_version)
		snprintf(buf, len, "no custom_labels_abi_version symbol");
	else if (info->version_in_file && info->abi_version > 1)
		snprintf(buf, len, "unknown ABI version %u: readers must not read its labels",
			 info->abi_version);
	else if (info->version_in_file)
		snprintf(buf, len, "ABI version %u but no TLS symbol %s", info->abi_version,
			 symbol_names[info->abi_version ? LP_FORM_CUSTOM_LABELS_V1
							: LP_FORM_CUSTOM_LABELS_V0]);
	else
		snprintf(buf, len,
			 "custom_labels_abi_version is not in the file and no TLS label symbol");
}

static void put_json_str(FILE *f, const char *s)
{
	if (s)
		fmt__json_bytes(f, s, strlen(s));
	else
		fputs("null", f);
}

static void put_str_json(const char *s)
{
	put_json_str(stdout, s);
}

/* A Go executable's version and how its goroutine labels are read, or why not; NULL if not Go. */
static const char *go_labels_line(const struct tls_file_info *info, char *buf, size_t len)
{
	struct lp_go_ref go;

	if (!info->go.is_go)
		return NULL;
	golang__recipe(info, &go, buf, len);
	return buf;
}

/* The members of a file's JSON object, after its opening brace: callers close it. */
static void put_file_json_members(const char *path, const struct tls_file_info *info)
{
	struct tls_model model = file_tls_model(info);
	struct lp_recipe exe;
	char reason[128], go[TLS_DIAG_LEN];
	__u32 i;

	fputs("{\"file\":", stdout);
	put_str_json(path);
	printf(",\"type\":\"%s\",\"machine\":", info->is_exe ? "executable" : "shared_library");
	put_str_json(tls__machine_name(info->machine));
	fputs(",\"libc\":", stdout);
	put_str_json(NAME(libc_names, info->interp_libc));
	if (info->version_in_file)
		printf(",\"abi_version\":%u", info->abi_version);
	else
		fputs(",\"abi_version\":null", stdout);
	fputs(",\"otel_thread_symbol\":", stdout);
	if (info->has_otel)
		printf("{\"symbol_table\":\"%s\",\"symbol_offset\":%" PRIu64 ",\"relocations\":%u}",
		       info->otel_sym_dynamic ? "dynsym" : "symtab", (uint64_t)info->otel_value,
		       info->nr_otel_relocs);
	else
		fputs("null", stdout);
	printf(",\"version_in_file\":%s,\"form\":", info->version_in_file ? "true" : "false");
	put_str_json(tls__form_name(info->form));
	if (info->form == LP_FORM_NONE) {
		no_labels_reason(info, reason, sizeof(reason));
		fputs(",\"reason\":", stdout);
		put_str_json(reason);
		fputs(",\"go\":", stdout);
		put_str_json(go_labels_line(info, go, sizeof(go)));
		return;
	}
	printf(",\"reason\":null,\"symbol\":\"%s\",\"symbol_table\":\"%s\",\"symbol_offset\":"
	       "%" PRIu64 ",\"tls_segment\":{\"memsz\":%" PRIu64 ",\"align\":%" PRIu64
	       ",\"vaddr\":\"0x%" PRIx64 "\"},\"tls_model\":",
	       symbol_names[info->form], info->tls_sym_dynamic ? "dynsym" : "symtab",
	       (uint64_t)info->tls_value, (uint64_t)info->tls_memsz, (uint64_t)info->tls_align,
	       (uint64_t)info->tls_vaddr);
	put_str_json(model.word);
	if (info->is_exe && !tls__exe_recipe(info, &exe))
		printf(",\"tp_offset\":%" PRId64, (int64_t)exe.labels.offset);
	else
		fputs(",\"tp_offset\":null", stdout);
	fputs(",\"relocations\":[", stdout);
	for (i = 0; i < info->nr_relocs; i++) {
		printf("%s{\"type\":", i ? "," : "");
		put_str_json(tls__reloc_name(info->machine, info->relocs[i].kind));
		printf(",\"offset\":\"0x%" PRIx64 "\",\"against\":\"%s\"}",
		       (uint64_t)info->relocs[i].r_offset,
		       info->relocs[i].local ? "module" : "symbol");
	}
	fputs("],\"go\":", stdout);
	put_str_json(go_labels_line(info, go, sizeof(go)));
}

static void put_file_json(const char *path, const struct tls_file_info *info)
{
	put_file_json_members(path, info);
	fputs("}", stdout);
}

static void put_file_text(const char *path, const struct tls_file_info *info, const char *indent)
{
	struct tls_model model = file_tls_model(info);
	const char *libc = NAME(libc_names, info->interp_libc);
	struct lp_recipe exe;
	char reason[128], go[TLS_DIAG_LEN];
	__u32 i;

	fmt__text_line(stdout, "%sfile: %s (%s, %s%s%s)", indent, path,
		       info->is_exe ? "executable" : "shared library",
		       tls__machine_name(info->machine), libc ? ", " : "", libc ? libc : "");
	if (info->has_otel)
		printf("%sOpenTelemetry thread context: otel_thread_ctx_v1 in %s, offset 0x%" PRIx64
		       " in the TLS block, %u TLS relocations\n",
		       indent, info->otel_sym_dynamic ? ".dynsym" : ".symtab",
		       (uint64_t)info->otel_value, info->nr_otel_relocs);
	if (go_labels_line(info, go, sizeof(go)))
		fmt__text_line(stdout, "%sgo: %s", indent, go);
	if (info->form == LP_FORM_NONE) {
		no_labels_reason(info, reason, sizeof(reason));
		printf("%slabels: none: %s\n", indent, reason);
		return;
	}
	printf("%slabels: %s (custom_labels_abi_version = %u%s)\n", indent,
	       tls__form_name(info->form), info->version_in_file ? info->abi_version : 0,
	       info->version_in_file ? "" : ", not in the file: read from the process");
	printf("%ssymbol: %s in %s, offset 0x%" PRIx64 " in the TLS block%s\n", indent,
	       symbol_names[info->form], info->tls_sym_dynamic ? ".dynsym" : ".symtab",
	       (uint64_t)info->tls_value,
	       info->tls_sym_dynamic ? "" : " (the spec wants a dynamic symbol)");
	printf("%sTLS segment: %" PRIu64 " bytes, align %" PRIu64 ", vaddr 0x%" PRIx64 "\n", indent,
	       (uint64_t)info->tls_memsz, (uint64_t)info->tls_align, (uint64_t)info->tls_vaddr);
	printf("%sTLS model: %s", indent, model.text);
	if (info->is_exe && !tls__exe_recipe(info, &exe))
		printf(": the label object is at tp%+" PRId64, (int64_t)exe.labels.offset);
	putchar('\n');
	for (i = 0; i < info->nr_relocs; i++)
		printf("%srelocation: %s at 0x%" PRIx64 " against the %s\n", indent,
		       tls__reloc_name(info->machine, info->relocs[i].kind),
		       (uint64_t)info->relocs[i].r_offset,
		       info->relocs[i].local ? "module's own TLS block" : "label symbol");
}

/* The label library in JSON: what the text's "linked label library" line says, or null. */
static void put_linked_json(const struct linked_library *lib)
{
	if (!lib) {
		fputs("null", stdout);
		return;
	}
	fputs("{\"needed\":", stdout);
	put_str_json(lib->needed);
	fputs(",\"path\":", stdout);
	put_str_json(lib->path);
	fputs(",\"form\":", stdout);
	put_str_json(tls__form_name(lib->form));
	fputs("}", stdout);
}

static int inspect_file(const struct inspect_env *env)
{
	struct tls_file_info info;
	struct linked_library lib;
	char err[512];
	bool linked;

	if (tls__inspect_file(env->target, &info, err, sizeof(err))) {
		fmt__text_line(stderr, "labelprof: %s", err);
		return 1;
	}
	/* labels are often published by a library the file links, not by the file */
	linked = info.form == LP_FORM_NONE && !linked__label_library(env->target, &lib);
	if (env->json) {
		put_file_json_members(env->target, &info);
		fputs(",\"linked_label_library\":", stdout);
		put_linked_json(linked ? &lib : NULL);
		fputs("}\n", stdout);
	} else {
		put_file_text(env->target, &info, "");
	}
	if (!env->json && linked) {
		fmt__text_line(stdout, "linked label library: %s (%s): %s", lib.needed, lib.path,
			       tls__form_name(lib.form));
		printf("  a process running this file has labels: labelprof inspect PID shows "
		       "where\n");
	}
	return 0;
}

/* Where a thread's TLS object is, in words. */
static void put_ref_where(const struct lp_tls_ref *r)
{
	if (r->access == LP_TLS_TP_OFFSET)
		printf("it is at tp%+" PRId64 "\n", (int64_t)r->offset);
	else if (r->access == LP_TLS_DTV)
		printf("dtv = *(tp%+" PRId64 "), it is at dtv[%" PRIu64 "] + %" PRId64
		       " (%u-byte entries%s)\n",
		       (int64_t)r->dtv_tp_offset, (uint64_t)r->dtv_modid, (int64_t)r->offset,
		       r->dtv_entry_size, r->dtv_flags & LP_DTV_GLIBC ? ", glibc" : "");
	else
		printf("the TLS descriptor at 0x%" PRIx64
		       " is read at every sample: a static offset from tp, or module and offset "
		       "for the DTV walk (dtv = *(tp%+" PRId64 "))\n",
		       (uint64_t)r->tlsdesc_addr, (int64_t)r->dtv_tp_offset);
}

static void put_ref_fields_text(const struct lp_tls_ref *r)
{
	printf("access %s, offset %" PRId64 ", dtv_tp_offset %" PRId64 ", dtv_modid %" PRIu64
	       ", dtv_entry_size %u, dtv_flags %#x, tlsdesc_addr 0x%" PRIx64,
	       NAME(access_names, r->access), (int64_t)r->offset, (int64_t)r->dtv_tp_offset,
	       (uint64_t)r->dtv_modid, r->dtv_entry_size, r->dtv_flags, (uint64_t)r->tlsdesc_addr);
}

/* The recipe in words: where the label object of a thread is. */
static void put_recipe_text(const struct lp_recipe *r)
{
	printf("  recipe: %s; ", r->form == LP_FORM_CUSTOM_LABELS_V1
					 ? "the TLS object points to the current label set"
					 : "the TLS object is the label set");
	put_ref_where(&r->labels);
	printf("  fields: form %s, ", tls__form_name(r->form));
	put_ref_fields_text(&r->labels);
	printf(", exec_seq %" PRIu64 "\n", (uint64_t)r->exec_seq);
}

static void put_ref_json(const struct lp_tls_ref *r)
{
	printf("\"access\":\"%s\",\"offset\":%" PRId64 ",\"dtv_tp_offset\":%" PRId64
	       ",\"dtv_modid\":%" PRIu64 ",\"dtv_entry_size\":%u,\"dtv_flags\":%u"
	       ",\"tlsdesc_addr\":\"0x%" PRIx64 "\"",
	       NAME(access_names, r->access), (int64_t)r->offset, (int64_t)r->dtv_tp_offset,
	       (uint64_t)r->dtv_modid, r->dtv_entry_size, r->dtv_flags, (uint64_t)r->tlsdesc_addr);
}

static void put_recipe_json(const struct lp_recipe *r)
{
	printf("{\"form\":\"%s\",", tls__form_name(r->form));
	put_ref_json(&r->labels);
	printf(",\"exec_seq\":%" PRIu64 "}", (uint64_t)r->exec_seq);
}

/* The OpenTelemetry thread context (otel_thread_ctx_v1): where, or why not. */
static void put_otel_thread(const struct lp_recipe *r, const struct tls_diag *diag, bool json)
{
	bool found = r->otel.access != LP_TLS_NONE;

	if (json) {
		fputs(",\"otel_thread\":{\"message\":", stdout);
		put_str_json(diag->otel_msg);
		fputs(",\"object\":", stdout);
		put_str_json(diag->otel_object[0] ? diag->otel_object : NULL);
		fputs(",\"case\":", stdout);
		put_str_json(NAME(case_names, diag->otel_case));
		fputs(",\"ref\":", stdout);
		if (found) {
			putchar('{');
			put_ref_json(&r->otel);
			putchar('}');
		} else {
			fputs("null", stdout);
		}
		putchar('}');
		return;
	}
	fmt__text_line(stdout, "  OpenTelemetry thread context: %s%s%s%s",
		       found ? "" : "not read: ", diag->otel_msg,
		       diag->otel_object[0] ? " in " : "", diag->otel_object);
	if (!found)
		return;
	printf(r->node.format ? "    otel_thread_ctx_nodejs_v1 leads to the record; "
			      : "    otel_thread_ctx_v1 points to the record; ");
	put_ref_where(&r->otel);
	printf("    fields: ");
	put_ref_fields_text(&r->otel);
	putchar('\n');
}

/* The OpenTelemetry process context (OTEP 4719): what it publishes, or why nothing. */
static void put_otel_process(pid_t pid, bool json)
{
	struct otel_ctx *ctx = NULL;
	char err[256] = "";
	__u64 addr = 0;
	size_t i;
	int ret;

	ret = otel_ctx__find(pid, NULL, &addr);
	if (!ret)
		ret = otel_ctx__read(pid, addr, &ctx, err, sizeof(err));
	if (ret && !err[0])
		snprintf(err, sizeof(err), "%s",
			 ret == -ENOENT ? "no mapping named OTEL_CTX" : strerror(-ret));
	if (json) {
		fputs(",\"otel_process\":{\"message\":", stdout);
		put_str_json(ret ? err : "ok");
		if (ret) {
			fputs(",\"resource\":null,\"key_map\":null}", stdout);
			return;
		}
		printf(",\"address\":\"0x%" PRIx64 "\",\"published_at_ns\":%" PRIu64
		       ",\"resource\":{",
		       (uint64_t)addr, (uint64_t)ctx->published_at_ns);
		for (i = 0; i < ctx->nr_resource; i++) {
			fputs(i ? "," : "", stdout);
			put_str_json(ctx->resource[i].key);
			putchar(':');
			put_str_json(ctx->resource[i].value);
		}
		fputs("},\"key_map\":[", stdout);
		for (i = 0; i < ctx->nr_keys; i++) {
			fputs(i ? "," : "", stdout);
			put_str_json(ctx->keys[i]);
		}
		printf("],\"key_map_entries\":%zu,\"schema_version\":", ctx->key_map_len);
		put_str_json(ctx->schema_version);
		putchar('}');
	} else if (ret) {
		fmt__text_line(stdout, "  OpenTelemetry process context: none: %s", err);
	} else {
		printf("  OpenTelemetry process context at 0x%" PRIx64 ", published at %" PRIu64
		       " ns: %zu resource attributes, %zu keys%s\n",
		       (uint64_t)addr, (uint64_t)ctx->published_at_ns, ctx->nr_resource,
		       ctx->key_map_len,
		       ctx->key_map_len > ctx->nr_keys ? " (only the first 256 are used)" : "");
		for (i = 0; i < ctx->nr_resource; i++)
			fmt__text_line(stdout, "    resource %s=%s", ctx->resource[i].key,
				       ctx->resource[i].value);
		for (i = 0; i < ctx->nr_keys; i++)
			fmt__text_line(stdout, "    key %zu: %s", i,
				       ctx->keys[i] ? ctx->keys[i] : "(not a string)");
		if (ctx->schema_version)
			fmt__text_line(stdout, "    schema version %s", ctx->schema_version);
	}
	otel_ctx__free(ctx);
}

static int inspect_pid(const struct inspect_env *env)
{
	const struct proc_report rep = {
		.out = stdout,
		.json = env->json,
		.json_str = put_json_str,
		.text_line = fmt__text_line,
	};
	struct registry *reg;
	struct lp_recipe r;
	struct tls_diag diag;
	struct tls_file_info info;
	const char *status, *summary;
	bool have_file, kthread;
	struct stat st;
	int err, fd;

	/* what the modules of a recording find */
	reg = probe__process(env->pid, &r, &diag, &err);
	if (!reg) {
		fprintf(stderr, "labelprof: cannot inspect pid %d: %s\n", env->pid, strerror(-err));
		return 1;
	}
	if (err == -ESRCH) {
		fprintf(stderr, "labelprof: no such process: %d\n", env->pid);
		registry__free(reg);
		return 1;
	}
	if (err == -EACCES || err == -EPERM) {
		fmt__text_line(stderr, "labelprof: pid %d: not permitted: %s", env->pid, diag.msg);
		registry__free(reg);
		return 1;
	}
	kthread = proc_is_kernel_thread(env->pid);
	if (kthread) {
		/* what the maps of no user memory say (no label library) would mislead */
		status = "none";
		summary = "kernel thread";
		snprintf(diag.msg, sizeof(diag.msg),
			 "no user memory, so no user stacks and no labels; record and top sample "
			 "its kernel stacks");
	} else if (err == -EAGAIN) {
		status = "pending"; /* the loader has not relocated the library yet */
		summary = "labels not located yet";
	} else if (err) {
		status = "error"; /* labels are published, their TLS cannot be located */
		summary = "labels not located";
	} else if (r.form == LP_FORM_NONE && r.otel.access == LP_TLS_NONE &&
		   r.go.format != LP_GO_NONE) {
		status = "ok";
		summary = "go_pprof";
	} else if (r.form == LP_FORM_NONE && r.otel.access == LP_TLS_NONE) {
		status = "none";
		summary = "no labels";
	} else {
		status = "ok";
		summary = r.form != LP_FORM_NONE ? tls__form_name(r.form)
						 : "OpenTelemetry thread context only";
	}
	/* the object as the process sees it, for its file-level facts */
	fd = diag.object[0] ? proc_root__open(env->pid, diag.object, &st) : -ENOENT;
	have_file = fd >= 0 && !tls__inspect_fd(fd, diag.object, &info, NULL, 0);
	if (fd >= 0)
		close(fd);

	if (env->json) {
		printf("{\"pid\":%d,\"status\":\"%s\",\"message\":", env->pid, status);
		put_str_json(diag.msg);
		fputs(",\"object\":", stdout);
		put_str_json(diag.object[0] ? diag.object : NULL);
		fputs(",\"case\":", stdout);
		put_str_json(NAME(case_names, diag.tls_case));
		fputs(",\"libc\":", stdout);
		put_str_json(NAME(libc_names, diag.libc));
		fputs(",\"recipe\":", stdout);
		if (!err && r.form != LP_FORM_NONE)
			put_recipe_json(&r);
		else
			fputs("null", stdout);
		fputs(",\"file\":", stdout);
		if (have_file)
			put_file_json(diag.object, &info);
		else
			fputs("null", stdout);
		put_otel_thread(&r, &diag, true);
		put_otel_process(env->pid, true);
		fputs(",\"go\":", stdout);
		put_str_json(diag.go[0] ? diag.go : NULL);
		registry__describe(reg, env->pid, &rep);
		fputs("}\n", stdout);
	} else {
		fmt__text_line(stdout, "pid %d: %s: %s", env->pid, summary, diag.msg);
		if (diag.tls_case)
			printf("  case: %s, libc %s\n", NAME(case_names, diag.tls_case) ?: "none",
			       NAME(libc_names, diag.libc) ?: "unknown");
		if (!err && r.form != LP_FORM_NONE)
			put_recipe_text(&r);
		if (have_file)
			put_file_text(diag.object, &info, "  ");
		else if (diag.object[0])
			fmt__text_line(stdout, "  object: %s", diag.object);
		if (!kthread) {
			put_otel_thread(&r, &diag, false);
			put_otel_process(env->pid, false);
		}
		if (diag.go[0])
			fmt__text_line(stdout, "  go: %s", diag.go);
		registry__describe(reg, env->pid, &rep);
	}
	registry__free(reg);
	return 0;
}

/* Exit status 1 when labelprof cannot sample here. */
static int inspect_system(const struct inspect_env *env)
{
	static struct features f;
	const struct feature *x;
	unsigned int i;

	features__probe(&f, env->verbose >= 2);
	if (env->json) {
		fputs("{\"kernel\":", stdout);
		put_str_json(f.release);
		fputs(",\"machine\":", stdout);
		put_str_json(f.machine);
		printf(",\"ready\":%s,\"features\":[", f.ready ? "true" : "false");
		for (i = 0; i < f.count; i++) {
			x = &f.list[i];
			printf("%s{\"name\":\"%s\",\"state\":\"%s\",\"need\":\"%s\",\"title\":",
			       i ? "," : "", x->name, features__state_name(x->state),
			       features__need_name(x->need));
			put_str_json(x->title);
			fputs(",\"used_by\":", stdout);
			put_str_json(x->used_by);
			fputs(",\"detail\":", stdout);
			put_str_json(x->detail[0] ? x->detail : NULL);
			fputs("}", stdout);
		}
		fputs("]}\n", stdout);
	} else {
		printf("kernel %s (%s): %s\n", f.release, f.machine,
		       f.ready ? "labelprof can sample here"
			       : "labelprof cannot sample here (see the required lines marked no)");
		for (i = 0; i < f.count; i++) {
			x = &f.list[i];
			printf("  %-9s %-8s  %s: %s\n", features__state_name(x->state),
			       features__need_name(x->need), x->title, x->used_by);
			if (x->detail[0])
				fmt__text_line(stdout, "%22s%s", "", x->detail);
		}
	}
	return f.ready ? 0 : 1;
}

int cmd_inspect(int argc, char **argv)
{
	static struct inspect_env env;
	static const struct argp argp = {
		.options = inspect_options,
		.parser = parse_inspect_opt,
		.args_doc = "PID|FILE\n--system",
		.doc = "Says which custom label form a process or an ELF file exposes, and where "
		       "its threads keep their labels.\v"
		       "A FILE (executable or shared library; a name of digits only is a PID, "
		       "write ./123 for such a file): the Custom Labels ABI version "
		       "(custom_labels_abi_version), the thread-local symbol and the symbol "
		       "table holding it, the TLS segment, and how the file's code reaches the "
		       "symbol: static offset (an executable's own TLS block, with its offset "
		       "from the thread pointer), TLSDESC, initial-exec or general dynamic, "
		       "with the relocations involved.\n\n"
		       "A PID: the recipe 'labelprof record' and 'labelprof labels' would "
		       "install for the process (form, access method, offsets, the mapped file "
		       "that provides the labels, exec_seq, always 0 outside a recording) and "
		       "the facts of that file, or why there is none: status ok, none (no "
		       "labels published, or an unknown ABI version), pending (the library is "
		       "not relocated yet) or error. Then the OpenTelemetry thread context "
		       "(otel_thread_ctx_v1: where its TLS pointer is, or why it is not read) "
		       "and process context (the OTEL_CTX mapping: its resource attributes, "
		       "attribute key map and schema version, or why there is none). For a "
		       "CPython process: its version, the interpreter file (python or "
		       "libpython), where its offsets come from (_Py_DebugOffsets or the "
		       "built-in table) and the thread states found. For a HotSpot JVM: its "
		       "version, whether its VMStructs were read, its code cache's bounds "
		       "and heaps, and its interpreter's code.\n\n"
		       "--system: the kernel features labelprof uses, each checked for real "
		       "(the last checks load and attach the sampler and run the label "
		       "reader on labelprof itself): yes, no or unchecked (a check needs "
		       "privileges or a feature found missing), and whether it is required, "
		       "optional (what works less well without it) or unused (tracefs and "
		       "debugfs: labelprof attaches every program through BTF).\n\n"
		       "--json writes the same as one JSON object.\n\n"
		       "Exit status: 0 when the process or file was inspected, whatever it "
		       "publishes; 1 when it could not be (no such process or file, not "
		       "permitted, not an ELF file), or, with --system, when a required "
		       "feature is missing; 2 on usage errors. A PID needs the right to "
		       "read /proc/PID/mem (root, or CAP_SYS_PTRACE).",
	};

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (env.system ? inspect_system(&env) : env.pid ? inspect_pid(&env) : inspect_file(&env))
		return 1;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "labelprof: cannot write the result: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
