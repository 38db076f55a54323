package org.apache.spark.shuffle.hcomm.internal.compat;

import java.util.List;

import scala.collection.Iterator;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * Java and Scala collections, for Scala 2.12 ({@code scala.jdk.javaapi.CollectionConverters} is 2.13 only). The same
 * signatures as the Scala 2.13 twin of this class.
 */
public final class ScalaCollections {
    private ScalaCollections() {
    }

    /** A view of a Scala sequence as a Java list. */
    public static <T> List<T> asJava(Seq<T> seq) {
        return JavaConverters.seqAsJavaList(seq);
    }

    /** An immutable Scala sequence with the elements of a Java list. */
    public static <T> Seq<T> toSeq(List<T> list) {
        return JavaConverters.asScalaBuffer(list).toList();
    }

    /**
     * An immutable Scala list with the elements of a Java list: a type that is a {@code Seq} of both meanings, so
     * Java code overriding a Spark method that returns {@code Seq} compiles on every line.
     */
    public static <T> scala.collection.immutable.List<T> toList(List<T> list) {
        return JavaConverters.asScalaBuffer(list).toList();
    }

    /** A view of a Java iterator as a Scala iterator. */
    public static <T> Iterator<T> asScala(java.util.Iterator<T> it) {
        return JavaConverters.asScalaIterator(it);
    }

    /** An iterator of nothing. */
    @SuppressWarnings("unchecked")
    public static <T> Iterator<T> emptyIterator() {
        return (Iterator<T>) scala.collection.Iterator$.MODULE$.empty();
    }

    /** The elements of {@code first}, then those of {@code second}. */
    public static <T> Iterator<T> concat(Iterator<T> first, Iterator<T> second) {
        return first.$plus$plus(() -> second);
    }
}
