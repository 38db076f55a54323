package org.apache.spark.shuffle.hcomm.internal.compat;

import java.util.List;

import scala.collection.Iterator;
import scala.collection.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Java and Scala collections, for Scala 2.13 (the Scala 2.12 twin of this class has the same signatures). The types
 * in the signatures are the ones Spark's APIs take and return on every line: {@code scala.collection.Seq}, not
 * {@code immutable.Seq}, which is what {@code Seq} means in Scala 2.13 source but not in 2.12.
 */
public final class ScalaCollections {
    private ScalaCollections() {
    }

    /** A view of a Scala sequence as a Java list. */
    public static <T> List<T> asJava(Seq<T> seq) {
        return CollectionConverters.asJava(seq);
    }

    /** An immutable Scala sequence with the elements of a Java list. */
    public static <T> Seq<T> toSeq(List<T> list) {
        return CollectionConverters.asScala(list).toSeq();
    }

    /**
     * An immutable Scala list with the elements of a Java list: a type that is a {@code Seq} of both meanings, so
     * Java code overriding a Spark method that returns {@code Seq} compiles on every line.
     */
    public static <T> scala.collection.immutable.List<T> toList(List<T> list) {
        return CollectionConverters.asScala(list).toList();
    }

    /** A view of a Java iterator as a Scala iterator. */
    public static <T> Iterator<T> asScala(java.util.Iterator<T> it) {
        return CollectionConverters.asScala(it);
    }

    /** An iterator of nothing. */
    public static <T> Iterator<T> emptyIterator() {
        return scala.collection.Iterator$.MODULE$.empty();
    }

    /** The elements of {@code first}, then those of {@code second}. */
    public static <T> Iterator<T> concat(Iterator<T> first, Iterator<T> second) {
        return first.concat(() -> second);
    }
}
