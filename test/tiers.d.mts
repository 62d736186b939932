export declare const FAST: string[];
export declare const FULL_ONLY: string[];
export declare const PR: string[];
export declare const PR_REPRESENTATIVES: Record<string, string>;
export declare const PR_ENV: Record<string, string>;
export declare const PR_CONFORMANCE: string[];
export declare function currentTier(env?: NodeJS.ProcessEnv): 'pr' | 'all';
