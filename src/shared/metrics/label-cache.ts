/**
 * Pre-bound label sets: a metric's child for a combination of label values is made once and then found
 * through nested Maps (no key string built, no label object allocated per observation). Only for label
 * values from small closed sets (route patterns, status codes, detector types, ...).
 */

export function cache1<C>(make: (a: string) => C): (a: string) => C {
  const byA = new Map<string, C>();
  return (a) => {
    let c = byA.get(a);
    if (c === undefined) {
      c = make(a);
      byA.set(a, c);
    }
    return c;
  };
}

export function cache2<C>(make: (a: string, b: string) => C): (a: string, b: string) => C {
  const byA = new Map<string, (b: string) => C>();
  return (a, b) => {
    let inner = byA.get(a);
    if (inner === undefined) {
      inner = cache1((bb) => make(a, bb));
      byA.set(a, inner);
    }
    return inner(b);
  };
}

export function cache3<C>(make: (a: string, b: string, c: string) => C): (a: string, b: string, c: string) => C {
  const byA = new Map<string, (b: string, c: string) => C>();
  return (a, b, c) => {
    let inner = byA.get(a);
    if (inner === undefined) {
      inner = cache2((bb, cc) => make(a, bb, cc));
      byA.set(a, inner);
    }
    return inner(b, c);
  };
}

/** Children by an HTTP status code (a number: no string conversion per request). */
export function cacheByStatus<C>(make: (status: string) => C): (status: number) => C {
  const byStatus = new Map<number, C>();
  return (status) => {
    let c = byStatus.get(status);
    if (c === undefined) {
      c = make(String(status));
      byStatus.set(status, c);
    }
    return c;
  };
}
