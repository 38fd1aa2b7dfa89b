/** The admin module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { adminModule } from './manifest.ts';
