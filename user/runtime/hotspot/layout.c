// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A HotSpot JVM's description of itself (docs/design.md section 12): libjvm
 * exports the VMStructs tables (gHotSpotVMStructs, gHotSpotVMTypes, the int
 * constants) and the layout of their entries (gHotSpot*Offset, *ArrayStride,
 * filled in when the JVM starts: read from the process). Every offset comes
 * from them, except the interpreter frame's method and bcp slots, which
 * VMStructs lacks (below).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/elf.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "proc/root.h"
#include "runtime/hotspot/hotspot.h"

#define MAX_ENTRIES 8192 /* VMStructs of JDK 17 has about 2000 */
#define NAME_LEN    80

/* The exported symbols: the tables and their entries' layout. */
enum {
	G_STRUCTS,
	G_STRUCT_TYPE,
	G_STRUCT_FIELD,
	G_STRUCT_STATIC,
	G_STRUCT_OFFSET,
	G_STRUCT_ADDRESS,
	G_STRUCT_STRIDE,
	G_TYPES,
	G_TYPE_NAME,
	G_TYPE_SIZE,
	G_TYPE_STRIDE,
	G_INTS,
	G_INT_NAME,
	G_INT_VALUE,
	G_INT_STRIDE,
	G_COUNT,
};

static const char *const globals[G_COUNT] = {
	"gHotSpotVMStructs",
	"gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMTypes",
	"gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMIntConstants",
	"gHotSpotVMIntConstantEntryNameOffset",
	"gHotSpotVMIntConstantEntryValueOffset",
	"gHotSpotVMIntConstantEntryArrayStride",
};

/* The fields read: a static field's address, any other's offset. */
enum {
	F_CC_HEAPS,
	F_CC_LOW,
	F_CC_HIGH,
	F_GA_LEN,
	F_GA_DATA,
	F_HEAP_MEMORY,
	F_HEAP_SEGMAP,
	F_HEAP_LOG2,
	F_VS_LOW_BOUNDARY,
	F_VS_HIGH_BOUNDARY,
	F_VS_LOW,
	F_INTERP_CODE,
	F_SQ_BUFFER,
	F_SQ_LIMIT,
	F_BLOB_FRAME_SIZE,
	F_BLOB_FRAME_COMPLETE,
	F_BLOB_CODE_BEGIN,
	F_BLOB_CODE_END,
	F_CM_METHOD,
	F_CM_SCOPES_DATA,
	F_NM_SCOPES_PCS,
	F_NM_DEPENDENCIES,
	F_NM_METADATA,
	F_NM_COMPILE_ID,
	F_PCDESC_PC,
	F_PCDESC_SCOPE,
	F_METHOD_CONST,
	F_CONST_CONSTANTS,
	F_CONST_FLAGS,
	F_CONST_CODE_SIZE,
	F_CONST_WORDS,
	F_CONST_NAME,
	F_CONST_SIGNATURE,
	F_CONST_IDNUM,
	F_CP_HOLDER,
	F_CP_SOURCE,
	F_CP_LENGTH,
	F_KLASS_NAME,
	F_SYM_LENGTH,
	F_SYM_BODY,
	F_VM_RELEASE,
	F_COUNT,
};

_Static_assert(F_COUNT <= 64, "a bit per field in tables.found_field");

static const char *const fields[F_COUNT][2] = {
	{"CodeCache", "_heaps"},
	{"CodeCache", "_low_bound"},
	{"CodeCache", "_high_bound"},
	{"GrowableArrayBase", "_len"},
	{"GrowableArray<int>", "_data"},
	{"CodeHeap", "_memory"},
	{"CodeHeap", "_segmap"},
	{"CodeHeap", "_log2_segment_size"},
	{"VirtualSpace", "_low_boundary"},
	{"VirtualSpace", "_high_boundary"},
	{"VirtualSpace", "_low"},
	{"AbstractInterpreter", "_code"},
	{"StubQueue", "_stub_buffer"},
	{"StubQueue", "_buffer_limit"},
	{"CodeBlob", "_frame_size"},
	{"CodeBlob", "_frame_complete_offset"},
	{"CodeBlob", "_code_begin"},
	{"CodeBlob", "_code_end"},
	{"CompiledMethod", "_method"},
	{"CompiledMethod", "_scopes_data_begin"},
	{"nmethod", "_scopes_pcs_offset"},
	{"nmethod", "_dependencies_offset"},
	{"nmethod", "_metadata_offset"},
	{"nmethod", "_compile_id"},
	{"PcDesc", "_pc_offset"},
	{"PcDesc", "_scope_decode_offset"},
	{"Method", "_constMethod"},
	{"ConstMethod", "_constants"},
	{"ConstMethod", "_flags"},
	{"ConstMethod", "_code_size"},
	{"ConstMethod", "_constMethod_size"},
	{"ConstMethod", "_name_index"},
	{"ConstMethod", "_signature_index"},
	{"ConstMethod", "_method_idnum"},
	{"ConstantPool", "_pool_holder"},
	{"ConstantPool", "_source_file_name_index"},
	{"ConstantPool", "_length"},
	{"Klass", "_name"},
	{"Symbol", "_length"},
	{"Symbol", "_body"},
	{"Abstract_VM_Version", "_s_vm_release"},
};

enum { T_HEAP_BLOCK, T_CONST_METHOD, T_CONSTANT_POOL, T_PCDESC, T_COUNT };
static const char *const types[T_COUNT] = {"HeapBlock", "ConstMethod", "ConstantPool", "PcDesc"};

enum { C_SENDER_SP, C_LAST_SP, C_HAS_LINES, C_ENTRY_BCI, C_COUNT };
static const char *const constants[C_COUNT] = {
	"frame::interpreter_frame_sender_sp_offset",
	"frame::interpreter_frame_last_sp_offset",
	"ConstMethod::_has_linenumber_table",
	"InvocationEntryBci",
};

struct tables {
	__u64 field[F_COUNT];
	__u64 type[T_COUNT];
	__s64 constant[C_COUNT];
	__u64 found_field, found_type, found_constant; /* bit per index */
	unsigned int entries;
};

static int read_word(pid_t pid, __u64 addr, __u64 *w)
{
	return proc_mem__read(pid, addr, w, sizeof(*w));
}

/* The C string at addr of pid, at most NAME_LEN - 1 bytes: 0 or -errno. */
static int read_name(pid_t pid, __u64 addr, char *buf)
{
	size_t i;

	/* 16 bytes at a time: a string may end just before an unmapped page */
	for (i = 0; i < NAME_LEN; i += 16) {
		if (proc_mem__read(pid, addr + i, buf + i, 16))
			return -EFAULT;
		if (memchr(buf + i, 0, 16))
			return 0;
	}
	buf[NAME_LEN - 1] = 0;
	return 0;
}

/* Entry i's word at offset off of the table at base (stride bytes apart). */
static int entry_word(pid_t pid, __u64 base, __u64 stride, unsigned int i, __u64 off, __u64 *w)
{
	return read_word(pid, base + i * stride + off, w);
}

static int read_fields(pid_t pid, const __u64 *g, struct tables *t)
{
	char type[NAME_LEN + 16], field[NAME_LEN + 16];
	__u64 name, w, is_static;
	unsigned int i, k;

	for (i = 0; i < MAX_ENTRIES; i++) {
		if (entry_word(pid, g[G_STRUCTS], g[G_STRUCT_STRIDE], i, g[G_STRUCT_TYPE], &name))
			return -EFAULT;
		if (!name)
			return 0;
		t->entries++;
		if (read_name(pid, name, type))
			return -EFAULT;
		for (k = 0; k < F_COUNT && strcmp(fields[k][0], type); k++)
			;
		if (k == F_COUNT)
			continue;
		if (entry_word(pid, g[G_STRUCTS], g[G_STRUCT_STRIDE], i, g[G_STRUCT_FIELD],
			       &name) ||
		    !name || read_name(pid, name, field))
			return -EFAULT;
		for (; k < F_COUNT; k++) {
			if (strcmp(fields[k][0], type) || strcmp(fields[k][1], field))
				continue;
			/* isStatic is an int32_t: its low half */
			if (entry_word(pid, g[G_STRUCTS], g[G_STRUCT_STRIDE], i, g[G_STRUCT_STATIC],
				       &is_static) ||
			    entry_word(pid, g[G_STRUCTS], g[G_STRUCT_STRIDE], i,
				       (__u32)is_static ? g[G_STRUCT_ADDRESS] : g[G_STRUCT_OFFSET],
				       &w))
				return -EFAULT;
			t->field[k] = w;
			t->found_field |= 1ull << k;
			break;
		}
	}
	return 0;
}

static int read_types(pid_t pid, const __u64 *g, struct tables *t)
{
	char type[NAME_LEN + 16];
	unsigned int i, k;
	__u64 name;

	for (i = 0; i < MAX_ENTRIES; i++) {
		if (entry_word(pid, g[G_TYPES], g[G_TYPE_STRIDE], i, g[G_TYPE_NAME], &name))
			return -EFAULT;
		if (!name)
			return 0;
		t->entries++;
		if (read_name(pid, name, type))
			return -EFAULT;
		for (k = 0; k < T_COUNT; k++) {
			if (strcmp(types[k], type))
				continue;
			if (entry_word(pid, g[G_TYPES], g[G_TYPE_STRIDE], i, g[G_TYPE_SIZE],
				       &t->type[k]))
				return -EFAULT;
			t->found_type |= 1ull << k;
		}
	}
	return 0;
}

static int read_constants(pid_t pid, const __u64 *g, struct tables *t)
{
	char name_buf[NAME_LEN + 16];
	unsigned int i, k;
	__u64 name, v;

	for (i = 0; i < MAX_ENTRIES; i++) {
		if (entry_word(pid, g[G_INTS], g[G_INT_STRIDE], i, g[G_INT_NAME], &name))
			return -EFAULT;
		if (!name)
			return 0;
		t->entries++;
		if (read_name(pid, name, name_buf))
			return -EFAULT;
		for (k = 0; k < C_COUNT; k++) {
			if (strcmp(constants[k], name_buf))
				continue;
			/* an int32_t value */
			if (entry_word(pid, g[G_INTS], g[G_INT_STRIDE], i, g[G_INT_VALUE], &v))
				return -EFAULT;
			t->constant[k] = (__s32)v;
			t->found_constant |= 1ull << k;
		}
	}
	return 0;
}

/* An offset that fits the recipe's 16 bits. */
static __u16 off16(const struct tables *t, int f, bool *bad)
{
	if (t->field[f] > 0xffff)
		*bad = true;
	return t->field[f];
}

/* The code cache's heaps and bounds, the interpreter's code: 0, -EAGAIN before they exist. */
static int read_code_cache(pid_t pid, const struct tables *t, struct lp_java_ref *r)
{
	__u64 heaps, data, heap, stubq, buf;
	__s32 len, log2, limit;
	int i;

	if (read_word(pid, t->field[F_CC_LOW], &r->cc_low) ||
	    read_word(pid, t->field[F_CC_HIGH], &r->cc_high) ||
	    read_word(pid, t->field[F_CC_HEAPS], &heaps))
		return -EFAULT;
	if (!r->cc_low || !heaps || r->cc_high <= r->cc_low)
		return -EAGAIN;
	if (proc_mem__read(pid, heaps + t->field[F_GA_LEN], &len, sizeof(len)) ||
	    read_word(pid, heaps + t->field[F_GA_DATA], &data))
		return -EFAULT;
	if (len <= 0 || !data)
		return -EAGAIN;
	if (len > LP_JAVA_MAX_HEAPS)
		return -ENOTSUP;
	r->heap_count = len;
	for (i = 0; i < len; i++) {
		struct lp_java_heap *h = &r->heaps[i];

		if (read_word(pid, data + i * 8, &heap) ||
		    read_word(pid, heap + t->field[F_HEAP_MEMORY] + t->field[F_VS_LOW_BOUNDARY],
			      &h->low) ||
		    read_word(pid, heap + t->field[F_HEAP_MEMORY] + t->field[F_VS_HIGH_BOUNDARY],
			      &h->high) ||
		    read_word(pid, heap + t->field[F_HEAP_SEGMAP] + t->field[F_VS_LOW],
			      &h->segmap) ||
		    proc_mem__read(pid, heap + t->field[F_HEAP_LOG2], &log2, sizeof(log2)))
			return -EFAULT;
		/* every heap has the same segment size (CodeCacheSegmentSize) */
		if (log2 < 4 || log2 > 16 || (i && (__u32)log2 != r->log2_segment) ||
		    h->high <= h->low || !h->segmap)
			return -ENOTSUP;
		r->log2_segment = log2;
	}
	/* the interpreter's stub queue, in a blob of the code cache */
	if (read_word(pid, t->field[F_INTERP_CODE], &stubq))
		return -EFAULT;
	if (!stubq)
		return -EAGAIN;
	if (read_word(pid, stubq + t->field[F_SQ_BUFFER], &buf) ||
	    proc_mem__read(pid, stubq + t->field[F_SQ_LIMIT], &limit, sizeof(limit)))
		return -EFAULT;
	if (!buf || limit <= 0)
		return -EAGAIN;
	r->interp_low = buf;
	r->interp_high = buf + limit;
	return 0;
}

/* Whether the mapped file is libjvm.so. */
static bool jvm_name(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "libjvm.so");
}

static int read_vm(pid_t pid, struct elf_file *ef, __u64 bias, struct hs_vm *vm, char *err,
		   size_t err_len)
{
	static const char *const vtable[] = {"_ZTV7nmethod"};
	GElf_Sym syms[G_COUNT], vt;
	unsigned int found[G_COUNT], vt_found;
	struct lp_java_ref *r = &vm->ref;
	struct hs_offsets *o = &vm->off;
	struct tables t = {0};
	__u64 g[G_COUNT], release;
	bool bad = false;
	int ret, i;

	if (elf_file__find_symbols(ef, globals, G_COUNT, syms, found) != G_COUNT) {
		snprintf(err, err_len, "libjvm exports no VMStructs");
		return -ENOTSUP;
	}
	if (elf_file__machine(ef) != EM_X86_64) {
		snprintf(err, err_len, "Java frames on this architecture are not read");
		return -ENOTSUP;
	}
	/* the table pointers and the entries' layout, as the JVM set them */
	for (i = 0; i < G_COUNT; i++)
		if (read_word(pid, syms[i].st_value + bias, &g[i]))
			return -EFAULT;
	if (!g[G_STRUCTS] || !g[G_STRUCT_STRIDE] || !g[G_TYPES] || !g[G_TYPE_STRIDE] ||
	    !g[G_INTS] || !g[G_INT_STRIDE])
		return -EAGAIN;
	ret = read_fields(pid, g, &t) ?: read_types(pid, g, &t) ?: read_constants(pid, g, &t);
	if (ret)
		return ret;
	vm->entries = t.entries;
	for (i = 0; i < F_COUNT; i++) {
		if (!(t.found_field & 1ull << i)) {
			snprintf(err, err_len, "VMStructs has no %s::%s", fields[i][0],
				 fields[i][1]);
			return -ENOTSUP;
		}
	}
	for (i = 0; i < T_COUNT; i++) {
		if (!(t.found_type & 1ull << i)) {
			snprintf(err, err_len, "VMStructs has no type %s", types[i]);
			return -ENOTSUP;
		}
	}
	for (i = 0; i < C_COUNT; i++) {
		if (!(t.found_constant & 1ull << i)) {
			snprintf(err, err_len, "VMStructs has no constant %s", constants[i]);
			return -ENOTSUP;
		}
	}
	if (!read_word(pid, t.field[F_VM_RELEASE], &release) && release)
		read_name(pid, release, vm->release);
	vm->release[sizeof(vm->release) - 1] = 0;

	r->heap_block = t.type[T_HEAP_BLOCK];
	r->blob_frame_size = off16(&t, F_BLOB_FRAME_SIZE, &bad);
	r->blob_frame_complete = off16(&t, F_BLOB_FRAME_COMPLETE, &bad);
	r->blob_code_begin = off16(&t, F_BLOB_CODE_BEGIN, &bad);
	r->nm_method = off16(&t, F_CM_METHOD, &bad);
	/*
	 * VMStructs has the sender SP and last SP slots of an interpreter frame,
	 * not the method's and bcp's. On x86-64 they follow last SP: method,
	 * mirror, mdp, cache, locals, bcp, one word each (frame_x86.hpp of JDK 11
	 * to 21: interpreter_frame_method_offset = last_sp - 1,
	 * interpreter_frame_bcp_offset = last_sp - 6).
	 */
	r->fp_sender_sp = t.constant[C_SENDER_SP] * 8;
	r->fp_method = (t.constant[C_LAST_SP] - 1) * 8;
	r->fp_bcp = (t.constant[C_LAST_SP] - 6) * 8;
	/* an nmethod is told from other blobs by its C++ vtable (2 words into the table) */
	vt_found = 0;
	elf_file__find_symbols(ef, vtable, 1, &vt, &vt_found);
	r->nmethod_vtable = vt_found ? vt.st_value + bias + 16 : 0;

	o->method_const = off16(&t, F_METHOD_CONST, &bad);
	o->const_constants = off16(&t, F_CONST_CONSTANTS, &bad);
	o->const_flags = off16(&t, F_CONST_FLAGS, &bad);
	o->const_code_size = off16(&t, F_CONST_CODE_SIZE, &bad);
	o->const_words = off16(&t, F_CONST_WORDS, &bad);
	o->const_name = off16(&t, F_CONST_NAME, &bad);
	o->const_signature = off16(&t, F_CONST_SIGNATURE, &bad);
	o->const_idnum = off16(&t, F_CONST_IDNUM, &bad);
	o->const_size = t.type[T_CONST_METHOD];
	o->cp_holder = off16(&t, F_CP_HOLDER, &bad);
	o->cp_source = off16(&t, F_CP_SOURCE, &bad);
	o->cp_length = off16(&t, F_CP_LENGTH, &bad);
	o->cp_size = t.type[T_CONSTANT_POOL];
	o->klass_name = off16(&t, F_KLASS_NAME, &bad);
	o->sym_length = off16(&t, F_SYM_LENGTH, &bad);
	o->sym_body = off16(&t, F_SYM_BODY, &bad);
	o->blob_code_end = off16(&t, F_BLOB_CODE_END, &bad);
	o->has_line_table = t.constant[C_HAS_LINES];
	o->nm_scopes_data = off16(&t, F_CM_SCOPES_DATA, &bad);
	o->nm_scopes_pcs = off16(&t, F_NM_SCOPES_PCS, &bad);
	o->nm_dependencies = off16(&t, F_NM_DEPENDENCIES, &bad);
	o->nm_metadata = off16(&t, F_NM_METADATA, &bad);
	o->nm_compile_id = off16(&t, F_NM_COMPILE_ID, &bad);
	o->pcdesc_size = t.type[T_PCDESC];
	o->pcdesc_pc = off16(&t, F_PCDESC_PC, &bad);
	o->pcdesc_scope = off16(&t, F_PCDESC_SCOPE, &bad);
	o->entry_bci = t.constant[C_ENTRY_BCI];
	if (bad || !r->heap_block || r->heap_block > 64 || !o->const_size || !o->cp_size ||
	    o->pcdesc_size < 8 || o->pcdesc_size > 64) {
		snprintf(err, err_len, "VMStructs gives offsets out of range");
		return -ENOTSUP;
	}
	ret = read_code_cache(pid, &t, r);
	if (ret == -ENOTSUP)
		snprintf(err, err_len, "a code cache of %u heaps or unknown layout", r->heap_count);
	return ret;
}

int hs_vm__find(pid_t pid, const struct maps *maps, struct hs_vm *vm,
		const struct maps_entry **file, char *err, size_t err_len)
{
	const struct maps_entry *e = NULL;
	struct elf_file *ef;
	struct stat st;
	size_t i;
	int fd, ret;

	memset(vm, 0, sizeof(*vm));
	for (i = 0; i < maps__count(maps); i++) {
		e = maps__entry(maps, i);
		if (e->kind == MAPS_FILE && jvm_name(e->path))
			break;
	}
	if (!e || i == maps__count(maps))
		return -ENOENT;
	fd = proc_root__open_mapped(pid, e, &st);
	if (fd < 0)
		return fd;
	ef = elf_file__open_fd(fd, e->path, err, err_len);
	if (!ef) {
		close(fd);
		return -ENOTSUP;
	}
	ret = elf_file__load_bias(ef, e->offset, e->start, &vm->bias);
	if (!ret)
		ret = read_vm(pid, ef, vm->bias, vm, err, err_len);
	elf_file__close(ef);
	close(fd);
	if (file)
		*file = e;
	return ret;
}
