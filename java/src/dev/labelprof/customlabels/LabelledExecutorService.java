// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package dev.labelprof.customlabels;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** CustomLabels.wrap(ExecutorService): every task is wrapped as it is submitted. */
final class LabelledExecutorService implements ExecutorService {
    private final ExecutorService inner;

    LabelledExecutorService(ExecutorService inner) {
        this.inner = inner;
    }

    private static <T> List<Callable<T>> wrapAll(Collection<? extends Callable<T>> tasks) {
        List<Callable<T>> out = new ArrayList<>(tasks.size());
        for (Callable<T> t : tasks) {
            out.add(CustomLabels.wrap(t));
        }
        return out;
    }

    @Override
    public void execute(Runnable command) {
        inner.execute(CustomLabels.wrap(command));
    }

    @Override
    public <T> Future<T> submit(Callable<T> task) {
        return inner.submit(CustomLabels.wrap(task));
    }

    @Override
    public <T> Future<T> submit(Runnable task, T result) {
        return inner.submit(CustomLabels.wrap(task), result);
    }

    @Override
    public Future<?> submit(Runnable task) {
        return inner.submit(CustomLabels.wrap(task));
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks)
            throws InterruptedException {
        return inner.invokeAll(wrapAll(tasks));
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks, long timeout,
            TimeUnit unit) throws InterruptedException {
        return inner.invokeAll(wrapAll(tasks), timeout, unit);
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks)
            throws InterruptedException, ExecutionException {
        return inner.invokeAny(wrapAll(tasks));
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        return inner.invokeAny(wrapAll(tasks), timeout, unit);
    }

    @Override
    public void shutdown() {
        inner.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
        return inner.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
        return inner.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return inner.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return inner.awaitTermination(timeout, unit);
    }
}
