import { useMutation } from '@tanstack/react-query';
import { useRef } from 'react';
import { useIdempotencyKey } from './idempotency';

/**
 * A creation that happens once per intent: a submit while one is in flight is ignored, and every attempt of the
 * same body carries the same Idempotency-Key (so even a second request that gets through is replayed by the
 * server, not created again). The key starts over after a success.
 */
export function useCreate<Body, Data>(
  create: (body: Body, idempotencyKey: string) => Promise<Data>,
  onCreated: (data: Data) => void,
) {
  const keys = useIdempotencyKey();
  const inFlight = useRef(false);
  const mutation = useMutation({
    mutationFn: (body: Body) => create(body, keys.keyFor(body)),
    onSuccess: (data) => {
      keys.done();
      onCreated(data);
    },
    onSettled: () => {
      inFlight.current = false;
    },
  });
  const submit = (body: Body) => {
    if (inFlight.current) return;
    inFlight.current = true;
    mutation.mutate(body);
  };
  return { ...mutation, submit };
}
