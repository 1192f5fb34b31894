import { type InputHTMLAttributes, type ReactNode, type TextareaHTMLAttributes, useId, useState } from 'react';

interface FieldProps {
  label: string;
  /** The server's message for this field, shown under it and tied to it with aria-describedby. */
  error?: string | undefined;
  hint?: string;
}

/** What a control needs to be tied to its label, hint and error. */
interface ControlProps {
  id: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
}

/** A label, an optional hint, the control, and the field's error under it. */
function Field({ label, error, hint, children }: FieldProps & { children: (control: ControlProps) => ReactNode }) {
  const id = useId();
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
      {error && (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

export function TextField({ label, error, hint, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <Field label={label} error={error} hint={hint}>
      {(control) => <input {...control} {...input} />}
    </Field>
  );
}

export function TextArea({ label, error, hint, ...input }: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return (
    <Field label={label} error={error} hint={hint}>
      {(control) => <textarea rows={3} {...control} {...input} />}
    </Field>
  );
}

export function SelectField<T extends string>({
  label,
  value,
  options,
  onChange,
  error,
  disabled,
}: FieldProps & {
  value: T;
  options: readonly { value: T; label: string }[];
  onChange: (value: T) => void;
  disabled?: boolean;
}) {
  return (
    <Field label={label} error={error}>
      {(control) => (
        <select {...control} value={value} disabled={disabled} onChange={(event) => onChange(event.target.value as T)}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/**
 * Checkboxes or radio buttons under one legend (a fieldset, so a screen reader names the group with each box),
 * with a hint and the server's error for the group, both tied to it with aria-describedby. The error comes first,
 * under the legend, where it is seen even when the group is long.
 */
export function FieldGroup({
  legend,
  hint,
  error,
  children,
}: {
  legend: string;
  hint?: ReactNode;
  error?: string | undefined;
  children: ReactNode;
}) {
  const id = useId();
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <fieldset className={error ? 'checks checks-invalid' : 'checks'} aria-describedby={describedBy}>
      <legend>{legend}</legend>
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
      {children}
    </fieldset>
  );
}

/** A submit button that says what it is doing and cannot be pressed twice while it does. */
export function SubmitButton({
  pending,
  label,
  pendingLabel,
}: {
  pending: boolean;
  label: string;
  pendingLabel: string;
}) {
  return (
    <button type="submit" className="button button-primary" disabled={pending} aria-busy={pending || undefined}>
      {pending ? pendingLabel : label}
    </button>
  );
}

/** A titled form inside a section ("Add a member", "Send a request"), named by its heading. */
export function SubForm({ title, onSubmit, children }: { title: string; onSubmit: () => void; children: ReactNode }) {
  const id = useId();
  return (
    <form
      className="subform"
      aria-labelledby={id}
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit();
      }}
    >
      <h3 id={id}>{title}</h3>
      {children}
    </form>
  );
}

/** A form's text values, and `bind(field)` to wire a field's value and change handler. */
export function useFormState<T extends Record<string, string>>(initial: T) {
  const [form, setForm] = useState(initial);
  const bind = (field: keyof T & string) => ({
    value: form[field],
    onChange: (event: { target: { value: string } }) =>
      setForm((current) => ({ ...current, [field]: event.target.value })),
  });
  return { form, setForm, bind, reset: () => setForm(initial) };
}

/**
 * A search box and its button: `onSearch` gets the trimmed text when the form is sent (not at every key, so that a
 * list does not reload while a word is typed).
 */
export function SearchForm({
  label,
  hint,
  formLabel,
  className,
  onSearch,
}: {
  label: string;
  hint: string;
  /** The search landmark's name, where a page has more than one form. */
  formLabel?: string;
  className?: string;
  onSearch: (q: string) => void;
}) {
  const [text, setText] = useState('');
  return (
    <form
      role="search"
      aria-label={formLabel}
      className={className}
      onSubmit={(event) => {
        event.preventDefault();
        onSearch(text.trim());
      }}
    >
      <TextField
        label={label}
        type="search"
        value={text}
        onChange={(event) => setText(event.target.value)}
        hint={hint}
      />
      <button type="submit" className="button">
        Search
      </button>
    </form>
  );
}
