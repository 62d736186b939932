export { site, CATALOG_PAGE, SiteOptionsSchema, type SiteOptions, type SiteResult } from './build.js';
