import { type ReactNode, useEffect, useRef } from 'react';

let firstPage = true;

/**
 * A page: its title in the tab and as the one h1. After a navigation, focus moves to the h1, so keyboard and
 * screen-reader users start at the new page's top instead of on a link that is gone.
 */
export function Page({ title, eyebrow, children }: { title: string; eyebrow?: ReactNode; children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · works-api console`;
  }, [title]);
  useEffect(() => {
    if (firstPage) firstPage = false;
    else heading.current?.focus();
  }, []);
  return (
    <>
      {eyebrow && <div className="eyebrow">{eyebrow}</div>}
      <h1 ref={heading} tabIndex={-1}>
        {title}
      </h1>
      {children}
    </>
  );
}

export function Section({ title, children, id }: { title: string; children: ReactNode; id?: string }) {
  return (
    <section className="card" aria-labelledby={id ? `${id}-title` : undefined}>
      <h2 id={id ? `${id}-title` : undefined}>{title}</h2>
      {children}
    </section>
  );
}
