// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loaded again and again in new class loaders by JBurn's churn mode. */
public class ChurnTarget {
	public static long spin(long until) {
		long x = 7;

		do {
			for (int i = 0; i < 256; i++)
				x = x * 31 + (x >>> 5) + i;
		} while (System.nanoTime() < until);
		return x;
	}
}
