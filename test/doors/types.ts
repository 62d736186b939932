/**
 * One row of the door table (test/verb-doors.test.ts): an exported verb called with options that do
 * not fit its schema, and the option its InvalidArgumentsError must name. `lib` is the package root
 * (src/index.ts), so every call goes through the public door.
 */
export type Lib = typeof import('../../src/index.js');

export interface DoorRow {
  /** The exported function (or class) the row calls. */
  verb: string;
  /** What the row feeds it, in words ("run is a number"). */
  what: string;
  /** Calls the verb with the bad input (sync or async). */
  call: (lib: Lib) => unknown;
  /** The option path the error names (`run`, `keepDays`, `targets.0`); '' for the options object itself. */
  option: string;
}

export interface CliDoorRow {
  /** The command line (without the program name) with one bad flag value or a missing argument. */
  argv: string[];
  /** What the error line on stderr must name (`--keep-days`, `<run>`). */
  names: string;
}

/** A group of verbs and the rows that knock on each one's door. */
export interface DoorGroup {
  /** Every exported function this group owns (the test checks the groups cover the package root, each name once). */
  verbs: readonly string[];
  /** Verbs whose input is anything by design, each with why (no row can be wrong for them). */
  anyInput?: Readonly<Record<string, string>>;
  rows: readonly DoorRow[];
  cli: readonly CliDoorRow[];
}
