/**
 * Baton's web dashboard: a Preact app bundled at build time (`npm run build` → `dist/dashboard/static`)
 * and served by the HTTP handler at `<basePath>/dashboard` (`baton serve --dashboard`). The page
 * talks only to the HTTP API, with the same bearer token; the shell and its assets carry no data.
 */
export {
  type DashboardAssets,
  type DashboardConfig,
  dashboardShell,
  loadDashboardAssets,
} from './dashboard-assets.ts';
