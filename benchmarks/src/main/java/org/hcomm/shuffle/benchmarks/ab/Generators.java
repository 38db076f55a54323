package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;
import java.util.function.Function;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;

/** Seeded data generation inside the executors: one task per part, each part generated lazily from its seed. */
final class Generators {
    private Generators() {
    }

    /** An RDD of the part numbers {@code first .. first + parts - 1}, one per partition. */
    static JavaRDD<Integer> parts(JavaSparkContext sc, int first, int parts) {
        List<Integer> ids = new ArrayList<>(parts);
        for (int i = 0; i < parts; i++) {
            ids.add(first + i);
        }
        return sc.parallelize(ids, parts);
    }

    /** The random stream of one part of one data set (seeded by both, so parts and data sets are independent). */
    static SplittableRandom random(long dataSet, int part) {
        return new SplittableRandom(Hashing.combine(dataSet, part));
    }

    /** {@code count} records made one at a time by {@code next}, never all in memory. */
    static <T> Iterator<T> lazily(long count, SplittableRandom rnd, Function<SplittableRandom, T> next) {
        return new Iterator<>() {
            long made;

            @Override
            public boolean hasNext() {
                return made < count;
            }

            @Override
            public T next() {
                if (made >= count) {
                    throw new NoSuchElementException();
                }
                made++;
                return next.apply(rnd);
            }
        };
    }

    static byte[] bytes(SplittableRandom rnd, int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }

    /** Records per part so that {@code parts} parts of {@code bytesPerRecord} come to {@code targetMb}. */
    static long perPart(long targetMb, int parts, int bytesPerRecord) {
        return Math.max(1, targetMb * 1_000_000L / bytesPerRecord / parts);
    }

    /** {@code in} with {@code f} applied to each element, lazily. */
    static <A, B> Iterator<B> map(Iterator<A> in, Function<A, B> f) {
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return in.hasNext();
            }

            @Override
            public B next() {
                return f.apply(in.next());
            }
        };
    }
}
