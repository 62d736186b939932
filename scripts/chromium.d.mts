/** Flags for a headless run on a closed network. */
export declare const CHROMIUM_ARGS: string[];
/** The path of the Chromium executable, unpacking the npm package's build on first use. */
export declare function chromiumExecutable(): Promise<string>;
