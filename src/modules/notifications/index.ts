/** The notifications module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { notificationsModule } from './manifest.ts';
