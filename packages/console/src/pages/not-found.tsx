import { Link } from 'wouter';
import { Page } from '../components/page';

export function NotFoundPage() {
  return (
    <Page title="Page not found">
      <p>
        There is no page here. <Link href="/">Back to your tenants</Link>.
      </p>
    </Page>
  );
}
