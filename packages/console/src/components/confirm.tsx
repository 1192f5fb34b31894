import { useEffect, useRef, useState } from 'react';

/**
 * A destructive action asks once more, in place (no modal to trap focus): "Remove" becomes "Remove Grace?" with
 * a confirm and a keep button; focus moves to the confirm button and back when it is kept.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  pending,
  disabled,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  pending?: boolean;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const startRef = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (wasAsking.current) startRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <button
        ref={startRef}
        type="button"
        className="button button-danger-quiet"
        disabled={disabled || pending}
        onClick={() => setAsking(true)}
      >
        {pending ? `${label}…` : label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span className="confirm-question">{question}</span>
      <button
        ref={confirmRef}
        type="button"
        className="button button-danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" className="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </span>
  );
}
