// Types of build.mjs (plain JavaScript so that it runs before anything is compiled) for the TypeScript that
// imports it: the bundle-size test and the browser tests.
export declare const WEB_ROOT: string;
export declare function webInputs(root?: string): string[];
export declare function webStaleness(root?: string): string | null;
export declare function buildWeb(options?: { root?: string; outDir?: string }): Promise<string>;
export declare function buildWebIfStale(log?: (line: string) => void, root?: string): Promise<boolean>;
