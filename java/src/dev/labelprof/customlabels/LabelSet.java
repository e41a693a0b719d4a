// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package dev.labelprof.customlabels;

import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.TreeMap;

/**
 * A label set and its prepared native set. Immutable; the native set is freed by a
 * Cleaner once no thread can have it installed: a thread that installed it holds it as
 * its current set (or a scope or wrapped task holds it to install it again).
 */
final class LabelSet {
    static final LabelSet EMPTY = new LabelSet(new String[0], 0);
    private static final Cleaner CLEANER = Cleaner.create();

    /** key0, value0, key1, value1, ... sorted by key. */
    final String[] pairs;
    /** The prepared set, 0 for the empty set (installing none). */
    final long handle;

    private LabelSet(String[] pairs, long handle) {
        this.pairs = pairs;
        this.handle = handle;
    }

    /** This set with the labels of adds (key, value, ...) added or replaced. */
    LabelSet merge(String[] adds) {
        TreeMap<String, String> m = new TreeMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        for (int i = 0; i < adds.length; i += 2) {
            m.put(adds[i], adds[i + 1]);
        }
        String[] out = new String[2 * m.size()];
        int i = 0;
        for (var e : m.entrySet()) {
            out[i++] = e.getKey();
            out[i++] = e.getValue();
        }
        if (Arrays.equals(out, pairs)) {
            return this;
        }
        return prepare(out);
    }

    private static LabelSet prepare(String[] pairs) {
        long h = Native.newSet();
        if (h == 0) {
            throw new OutOfMemoryError("custom_labels_labelset_new");
        }
        for (int i = 0; i < pairs.length; i += 2) {
            int err = Native.setLabel(h, pairs[i].getBytes(StandardCharsets.UTF_8),
                    pairs[i + 1].getBytes(StandardCharsets.UTF_8));
            if (err != 0) {
                Native.freeSet(h);
                throw error(err, pairs[i]);
            }
        }
        LabelSet s = new LabelSet(pairs, h);
        CLEANER.register(s, () -> Native.freeSet(h));
        return s;
    }

    private static RuntimeException error(int err, String key) {
        switch (-err) {
        case 12: // ENOMEM
            throw new OutOfMemoryError("custom_labels_labelset_set");
        case 90: // EMSGSIZE
            return new IllegalArgumentException("label " + key
                    + ": key or value longer than libcustomlabels' limit");
        case 28: // ENOSPC
            return new IllegalArgumentException("label " + key
                    + ": more labels than libcustomlabels' limit");
        default:
            return new IllegalStateException("custom_labels_labelset_set: error " + -err);
        }
    }
}
