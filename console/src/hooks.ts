import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, gql, type Json } from './api';

export interface QueryState<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs a query when its variables change (and every `pollMs` when given, for live updates without a
 * reload); the newest answer wins. Errors are kept next to the last good data.
 */
export function useQuery<T = Json>(query: string, variables: Json, pollMs?: number): QueryState<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const vars = JSON.stringify(variables);
  const run = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const d = await gql<T>(query, JSON.parse(vars));
      if (mine !== seq.current) return;
      setData(d);
      setError(null);
    } catch (e) {
      if (mine !== seq.current) return;
      setError(e instanceof ApiError ? e : new ApiError(String(e), 'error', 0));
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, [query, vars]);
  useEffect(() => {
    setLoading(true);
    void run();
    if (!pollMs) return;
    const t = setInterval(() => void run(), pollMs);
    return () => clearInterval(t);
  }, [run, pollMs]);
  return { data, error, loading, reload: () => void run() };
}
