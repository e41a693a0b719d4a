// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Demangling as perf shows names: C++ without parameters, Rust legacy
 * without its hash, Rust v0; other names and overlong ones left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "symbolize/demangle.h"

static void check(const char *mangled, const char *want)
{
	char *got = sym_demangle(mangled);

	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_cxx(void **state)
{
	check("_ZN9JavaCalls11call_"
	      "helperEP9JavaValueRK12methodHandleP17JavaCallArgumentsP10JavaThread",
	      "JavaCalls::call_helper");
	check("_ZN4node5StartEiPPc", "node::Start");
	check("_ZNSt6vectorIiSaIiEE9push_backERKi",
	      "std::vector<int, std::allocator<int> >::push_back");
	check("_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()");
	/* a compiler clone reads as its function (the symbol stays beside it) */
	check("_ZN3foo3barEv.constprop.0", "foo::bar");
}

static void test_rust(void **state)
{
	check("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	check("_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example");
}

static void test_left_alone(void **state)
{
	char *big = malloc(SYM_DEMANGLE_MAX + 16), *got;

	check("main", NULL);
	check("_start", NULL);
	check("_Z", NULL);
	check("_Zgarbage", NULL);
	check("_R", NULL);
	check("Ljava/lang/String;::hashCode", NULL);
	/* f<int, int, ...>(): 1000 ints demangle; past the limit, the name stays */
	assert_non_null(big);
	memcpy(big, "_Z1fIJ", 6);
	memset(big + 6, 'i', 1000);
	strcpy(big + 6 + 1000, "EEvv");
	got = sym_demangle(big);
	assert_non_null(got);
	assert_int_equal(strlen(got), strlen("f<>") + 1000 * strlen("int, ") - 2);
	free(got);
	memset(big + 6, 'i', SYM_DEMANGLE_MAX);
	strcpy(big + SYM_DEMANGLE_MAX - 3, "EEvv");
	assert_int_equal(strlen(big), SYM_DEMANGLE_MAX + 1);
	check(big, NULL);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
