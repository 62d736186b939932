export { site, CATALOG_PAGE, type SiteOptions, type SiteResult } from './build.js';
