// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Ground truth for Java frames (tests/e2e/test_java.py): worker threads
 * each burn CPU in burnN under the label set=N, switching every few ms, at
 * the bottom of a recursion (nest) below Thread.run. Modes: plain; jni
 * (each burn is reached through a native method calling back into Java:
 * viaNative -> upcall (libjburn.so) -> fromNative); churn (plus a thread
 * that loads ChurnTarget in a new class loader again and again, runs it and
 * drops it: classes unloaded, methods freed, code flushed while sampling).
 * Labels are set with the Java library (dev.labelprof.customlabels).
 * "ready" on stderr once warm; exits when stdin closes.
 */
import dev.labelprof.customlabels.CustomLabels;
import java.io.InputStream;
import java.lang.reflect.Method;

public class JBurn {
	static final long SWITCH_NS = 3_000_000;
	static volatile long sink;
	static boolean jni;

	static final String[] SETS = {"0", "1", "2", "3"};

	static native void upcall(int set, long until);

	/* Too big to inline (FreqInlineSize): its own frame in every tier. */
	static long burn0(long until) {
		long x = 1, y = 0;
		do {
			for (int i = 0; i < 64; i++) {
				x = x * 31 + i; x ^= x >>> 7; y += x | 0;
				x = x * 31 + i; x ^= x >>> 8; y += x | 1;
				x = x * 31 + i; x ^= x >>> 9; y += x | 2;
				x = x * 31 + i; x ^= x >>> 10; y += x | 3;
				x = x * 31 + i; x ^= x >>> 11; y += x | 4;
				x = x * 31 + i; x ^= x >>> 12; y += x | 5;
				x = x * 31 + i; x ^= x >>> 13; y += x | 6;
				x = x * 31 + i; x ^= x >>> 14; y += x | 7;
				x = x * 31 + i; x ^= x >>> 15; y += x | 8;
				x = x * 31 + i; x ^= x >>> 16; y += x | 9;
				x = x * 31 + i; x ^= x >>> 17; y += x | 10;
				x = x * 31 + i; x ^= x >>> 7; y += x | 11;
				x = x * 31 + i; x ^= x >>> 8; y += x | 12;
				x = x * 31 + i; x ^= x >>> 9; y += x | 13;
				x = x * 31 + i; x ^= x >>> 10; y += x | 14;
				x = x * 31 + i; x ^= x >>> 11; y += x | 15;
				x = x * 31 + i; x ^= x >>> 12; y += x | 16;
				x = x * 31 + i; x ^= x >>> 13; y += x | 17;
				x = x * 31 + i; x ^= x >>> 14; y += x | 18;
				x = x * 31 + i; x ^= x >>> 15; y += x | 19;
				x = x * 31 + i; x ^= x >>> 16; y += x | 20;
				x = x * 31 + i; x ^= x >>> 17; y += x | 21;
				x = x * 31 + i; x ^= x >>> 7; y += x | 22;
				x = x * 31 + i; x ^= x >>> 8; y += x | 23;
			}
		} while (System.nanoTime() < until);
		return x + y;
	}

	/* Too big to inline (FreqInlineSize): its own frame in every tier. */
	static long burn1(long until) {
		long x = 2, y = 0;
		do {
			for (int i = 0; i < 64; i++) {
				x = x * 31 + i; x ^= x >>> 7; y += x | 0;
				x = x * 31 + i; x ^= x >>> 8; y += x | 1;
				x = x * 31 + i; x ^= x >>> 9; y += x | 2;
				x = x * 31 + i; x ^= x >>> 10; y += x | 3;
				x = x * 31 + i; x ^= x >>> 11; y += x | 4;
				x = x * 31 + i; x ^= x >>> 12; y += x | 5;
				x = x * 31 + i; x ^= x >>> 13; y += x | 6;
				x = x * 31 + i; x ^= x >>> 14; y += x | 7;
				x = x * 31 + i; x ^= x >>> 15; y += x | 8;
				x = x * 31 + i; x ^= x >>> 16; y += x | 9;
				x = x * 31 + i; x ^= x >>> 17; y += x | 10;
				x = x * 31 + i; x ^= x >>> 7; y += x | 11;
				x = x * 31 + i; x ^= x >>> 8; y += x | 12;
				x = x * 31 + i; x ^= x >>> 9; y += x | 13;
				x = x * 31 + i; x ^= x >>> 10; y += x | 14;
				x = x * 31 + i; x ^= x >>> 11; y += x | 15;
				x = x * 31 + i; x ^= x >>> 12; y += x | 16;
				x = x * 31 + i; x ^= x >>> 13; y += x | 17;
				x = x * 31 + i; x ^= x >>> 14; y += x | 18;
				x = x * 31 + i; x ^= x >>> 15; y += x | 19;
				x = x * 31 + i; x ^= x >>> 16; y += x | 20;
				x = x * 31 + i; x ^= x >>> 17; y += x | 21;
				x = x * 31 + i; x ^= x >>> 7; y += x | 22;
				x = x * 31 + i; x ^= x >>> 8; y += x | 23;
			}
		} while (System.nanoTime() < until);
		return x + y;
	}

	/* Too big to inline (FreqInlineSize): its own frame in every tier. */
	static long burn2(long until) {
		long x = 3, y = 0;
		do {
			for (int i = 0; i < 64; i++) {
				x = x * 31 + i; x ^= x >>> 7; y += x | 0;
				x = x * 31 + i; x ^= x >>> 8; y += x | 1;
				x = x * 31 + i; x ^= x >>> 9; y += x | 2;
				x = x * 31 + i; x ^= x >>> 10; y += x | 3;
				x = x * 31 + i; x ^= x >>> 11; y += x | 4;
				x = x * 31 + i; x ^= x >>> 12; y += x | 5;
				x = x * 31 + i; x ^= x >>> 13; y += x | 6;
				x = x * 31 + i; x ^= x >>> 14; y += x | 7;
				x = x * 31 + i; x ^= x >>> 15; y += x | 8;
				x = x * 31 + i; x ^= x >>> 16; y += x | 9;
				x = x * 31 + i; x ^= x >>> 17; y += x | 10;
				x = x * 31 + i; x ^= x >>> 7; y += x | 11;
				x = x * 31 + i; x ^= x >>> 8; y += x | 12;
				x = x * 31 + i; x ^= x >>> 9; y += x | 13;
				x = x * 31 + i; x ^= x >>> 10; y += x | 14;
				x = x * 31 + i; x ^= x >>> 11; y += x | 15;
				x = x * 31 + i; x ^= x >>> 12; y += x | 16;
				x = x * 31 + i; x ^= x >>> 13; y += x | 17;
				x = x * 31 + i; x ^= x >>> 14; y += x | 18;
				x = x * 31 + i; x ^= x >>> 15; y += x | 19;
				x = x * 31 + i; x ^= x >>> 16; y += x | 20;
				x = x * 31 + i; x ^= x >>> 17; y += x | 21;
				x = x * 31 + i; x ^= x >>> 7; y += x | 22;
				x = x * 31 + i; x ^= x >>> 8; y += x | 23;
			}
		} while (System.nanoTime() < until);
		return x + y;
	}

	/* Too big to inline (FreqInlineSize): its own frame in every tier. */
	static long burn3(long until) {
		long x = 4, y = 0;
		do {
			for (int i = 0; i < 64; i++) {
				x = x * 31 + i; x ^= x >>> 7; y += x | 0;
				x = x * 31 + i; x ^= x >>> 8; y += x | 1;
				x = x * 31 + i; x ^= x >>> 9; y += x | 2;
				x = x * 31 + i; x ^= x >>> 10; y += x | 3;
				x = x * 31 + i; x ^= x >>> 11; y += x | 4;
				x = x * 31 + i; x ^= x >>> 12; y += x | 5;
				x = x * 31 + i; x ^= x >>> 13; y += x | 6;
				x = x * 31 + i; x ^= x >>> 14; y += x | 7;
				x = x * 31 + i; x ^= x >>> 15; y += x | 8;
				x = x * 31 + i; x ^= x >>> 16; y += x | 9;
				x = x * 31 + i; x ^= x >>> 17; y += x | 10;
				x = x * 31 + i; x ^= x >>> 7; y += x | 11;
				x = x * 31 + i; x ^= x >>> 8; y += x | 12;
				x = x * 31 + i; x ^= x >>> 9; y += x | 13;
				x = x * 31 + i; x ^= x >>> 10; y += x | 14;
				x = x * 31 + i; x ^= x >>> 11; y += x | 15;
				x = x * 31 + i; x ^= x >>> 12; y += x | 16;
				x = x * 31 + i; x ^= x >>> 13; y += x | 17;
				x = x * 31 + i; x ^= x >>> 14; y += x | 18;
				x = x * 31 + i; x ^= x >>> 15; y += x | 19;
				x = x * 31 + i; x ^= x >>> 16; y += x | 20;
				x = x * 31 + i; x ^= x >>> 17; y += x | 21;
				x = x * 31 + i; x ^= x >>> 7; y += x | 22;
				x = x * 31 + i; x ^= x >>> 8; y += x | 23;
			}
		} while (System.nanoTime() < until);
		return x + y;
	}

	static long burn(int set, long until) {
		switch (set) {
		case 0: return burn0(until);
		case 1: return burn1(until);
		case 2: return burn2(until);
		default: return burn3(until);
		}
	}

	/* Called back by upcall, from native code. */
	static void fromNative(int set, long until) {
		sink += nest(4, set, until);
	}

	static long nest(int depth, int set, long until) {
		if (depth > 0)
			return nest(depth - 1, set, until) + depth;
		return burn(set, until);
	}

	static void viaNative(int set, long until) {
		upcall(set, until);
	}

	static void step(int set) {
		long until = System.nanoTime() + SWITCH_NS;

		try (CustomLabels.Scope s = CustomLabels.with("set", SETS[set])) {
			if (jni)
				viaNative(set, until);
			else
				sink += nest(8, set, until);
		}
	}

	static class Worker implements Runnable {
		final int first;

		Worker(int first) {
			this.first = first;
		}

		public void run() {
			for (int i = first;; i++)
				step(i & 3);
		}
	}

	/* Loads ChurnTarget anew, runs it a little, drops it; a GC now and then unloads. */
	static void churn() throws Exception {
		byte[] bytes;

		try (InputStream in = JBurn.class.getResourceAsStream("ChurnTarget.class")) {
			bytes = in.readAllBytes();
		}
		CustomLabels.with("set", "9");
		for (int n = 1;; n++) {
			ClassLoader loader = new ClassLoader(null) {
				@Override
				protected Class<?> findClass(String name) throws ClassNotFoundException {
					if (!name.equals("ChurnTarget"))
						throw new ClassNotFoundException(name);
					return defineClass(name, bytes, 0, bytes.length);
				}
			};
			Method spin = loader.loadClass("ChurnTarget").getMethod("spin", long.class);
			for (int k = 0; k < 20; k++)
				sink += (Long)spin.invoke(null, System.nanoTime() + 50_000);
			if (n % 50 == 0)
				System.gc();
		}
	}

	public static void main(String[] args) throws Exception {
		String mode = args.length > 0 ? args[0] : "plain";
		int threads = args.length > 1 ? Integer.parseInt(args[1]) : 3;

		System.loadLibrary("jburn");
		jni = mode.equals("jni");
		for (int t = 0; t < threads; t++) {
			Thread w = new Thread(new Worker(t), "burn-" + t);
			w.setDaemon(true);
			w.start();
		}
		if (mode.equals("churn")) {
			Thread c = new Thread(() -> {
				try {
					churn();
				} catch (Exception e) {
					e.printStackTrace();
					System.exit(1);
				}
			}, "churn");
			c.setDaemon(true);
			c.start();
		}
		/* warm: the tiers the options allow have compiled the burns */
		Thread.sleep(1500);
		System.err.println("jburn: ready pid=" + ProcessHandle.current().pid());
		while (System.in.read() >= 0)
			;
		System.exit(0);
	}
}
