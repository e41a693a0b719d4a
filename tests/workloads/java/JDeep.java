// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A Java stack of a given depth (main and the calls of f), spinning in the
 * innermost: the Java section of make bench (bench/run). "ready" on stdout.
 */
public class JDeep {
	static volatile long sink;

	static void f(int n) {
		if (n > 0) {
			f(n - 1);
			return;
		}
		System.out.println("ready");
		System.out.flush();
		for (long i = 0;; i++)
			sink += i;
	}

	public static void main(String[] args) {
		f(Integer.parseInt(args[0]) - 2);
	}
}
