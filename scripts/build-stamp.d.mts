export declare const STAMP_FILE: string;
export declare function buildInputs(root: string): string[];
export declare function sourceHash(root: string): string;
export declare function writeStamp(root: string): void;
export declare function staleBuild(root: string): string | null;
