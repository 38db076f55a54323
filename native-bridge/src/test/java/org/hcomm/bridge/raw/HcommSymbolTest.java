package org.hcomm.bridge.raw;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The symbol table the loader and the doctor read names exactly the native methods of the mapped classes. */
class HcommSymbolTest {
    @Test
    void everyMappedFunctionIsInTheTableWithItsBindingClass() {
        for (Class<?> binding : Set.of(HcommLibrary.class, HcommOnThreadLibrary.class, HcommNbiLibrary.class,
                HcommStreamLibrary.class, HcommAllocLibrary.class, HcclLibrary.class, HcclCommLockLibrary.class,
                HcclWriteLibrary.class)) {
            Set<String> mapped = Arrays.stream(binding.getDeclaredMethods())
                    .filter(m -> Modifier.isNative(m.getModifiers()))
                    .map(Method::getName)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> listed = Arrays.stream(HcommSymbol.values())
                    .filter(s -> s.binding() == binding)
                    .map(Enum::name)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(mapped, listed, binding.getSimpleName());
        }
    }
}
