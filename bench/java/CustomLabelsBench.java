// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
import dev.labelprof.customlabels.CustomLabels;
import dev.labelprof.customlabels.OtelContext;
import java.util.List;
import java.util.Map;

/**
 * ns per labels scope of dev.labelprof.customlabels (open and close), beside an empty
 * try-with-resources, best of several rounds after a warm-up (JIT).
 *   java -Djava.library.path=OUTPUT/lib -cp customlabels.jar:customlabels-bench.jar \
 *       CustomLabelsBench [--json] [--rounds N]
 */
public final class CustomLabelsBench {
    private static final int CALLS = 2_000_000;
    private static final String[] TENANTS = {"acme", "globex", "initech", "umbrella"};
    private static final String[] ENDPOINTS = {"/search", "/checkout"};
    private static final AutoCloseable NOOP = () -> {};
    private static final byte[] TRACE = new byte[16];
    private static final byte[] SPAN = new byte[8];
    private static long sink;

    private interface Op {
        void run(int calls) throws Exception;
    }

    private static void empty(int calls) throws Exception {
        for (int i = 0; i < calls; i++) {
            try (var s = NOOP) {
                sink += i;
            }
        }
    }

    private static void with1(int calls) {
        for (int i = 0; i < calls; i++) {
            try (var s = CustomLabels.with("tenant", TENANTS[i & 3])) {
                sink += i;
            }
        }
    }

    private static void with2(int calls) {
        for (int i = 0; i < calls; i++) {
            try (var s = CustomLabels.with("tenant", TENANTS[i & 3], "endpoint",
                    ENDPOINTS[i & 1])) {
                sink += i;
            }
        }
    }

    /** A request's tenant arriving as a new String each time (equal, not identical). */
    private static void with2Fresh(int calls) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < calls; i++) {
            b.setLength(0);
            String tenant = b.append(TENANTS[i & 3]).toString();
            try (var s = CustomLabels.with("tenant", tenant, "endpoint", ENDPOINTS[i & 1])) {
                sink += i;
            }
        }
    }

    private static void nested(int calls) {
        for (int i = 0; i < calls; i++) {
            try (var s = CustomLabels.with("tenant", TENANTS[i & 3])) {
                try (var t = CustomLabels.with("endpoint", ENDPOINTS[i & 1])) {
                    sink += i;
                }
            }
        }
    }

    private static void wrap(int calls) {
        try (var s = CustomLabels.with("tenant", "acme")) {
            for (int i = 0; i < calls; i++) {
                CustomLabels.wrap(() -> {
                    sink++;
                }).run();
            }
        }
    }

    /** A label value unique to each call: a new prepared set every time. */
    private static void unique(int calls) {
        for (int i = 0; i < calls; i++) {
            try (var s = CustomLabels.with("request", Integer.toString(i))) {
                sink += i;
            }
        }
    }

    private static void otel(int calls) {
        for (int i = 0; i < calls; i++) {
            SPAN[0] = (byte) i;
            try (var s = OtelContext.attach(TRACE, SPAN, 1, "http.route", ENDPOINTS[i & 1])) {
                sink += i;
            }
        }
    }

    private static double best(Op op, int calls, int rounds) throws Exception {
        op.run(calls); // warm-up: the JIT compiles the loop
        double best = Double.MAX_VALUE;
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            op.run(calls);
            best = Math.min(best, (double) (System.nanoTime() - t0) / calls);
        }
        return best;
    }

    public static void main(String[] args) throws Exception {
        boolean json = false;
        int rounds = 5;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--json")) {
                json = true;
            } else if (args[i].equals("--rounds") && i + 1 < args.length) {
                rounds = Integer.parseInt(args[++i]);
            } else {
                System.err.println("usage: CustomLabelsBench [--json] [--rounds N]");
                System.exit(2);
            }
        }
        OtelContext.publish(Map.of("service.name", "bench"), List.of("http.route"));
        Object[][] ops = {
            {"empty", "empty try-with-resources (baseline)", (Op) CustomLabelsBench::empty, CALLS},
            {"with1", "with(k, v) of 4 sets", (Op) CustomLabelsBench::with1, CALLS},
            {"with2", "with(k1, v1, k2, v2) of 8 sets", (Op) CustomLabelsBench::with2, CALLS},
            {"with2_fresh", "same, values new Strings", (Op) CustomLabelsBench::with2Fresh, CALLS},
            {"nested", "with(k1, v1) { with(k2, v2) }", (Op) CustomLabelsBench::nested, CALLS},
            {"wrap", "wrap(Runnable).run()", (Op) CustomLabelsBench::wrap, CALLS},
            {"unique", "with(k, v), v new each call", (Op) CustomLabelsBench::unique, CALLS / 10},
            {"otel", "OtelContext.attach, 1 attribute", (Op) CustomLabelsBench::otel, CALLS},
        };
        double[] ns = new double[ops.length];
        for (int i = 0; i < ops.length; i++) {
            ns[i] = best((Op) ops[i][2], (Integer) ops[i][3], rounds);
        }
        System.out.printf("dev.labelprof.customlabels, ns per scope (open + close), "
                + "best of %d rounds%n", rounds);
        System.out.printf("%-12s %-38s %8s%n", "op", "what", "ns");
        for (int i = 0; i < ops.length; i++) {
            System.out.printf("%-12s %-38s %8.1f%n", ops[i][0], ops[i][1], ns[i]);
        }
        if (json) {
            for (int i = 0; i < ops.length; i++) {
                System.out.printf("{\"bench\":\"customlabels_java\",\"op\":\"%s\",\"ns\":%.2f}%n",
                        ops[i][0], ns[i]);
            }
        }
        if (sink == 42) {
            System.out.println();
        }
    }
}
