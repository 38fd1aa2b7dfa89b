/** The analytics module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { analyticsModule } from './manifest.ts';
