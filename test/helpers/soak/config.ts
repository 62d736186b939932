// The soak's size and seed, read once from the environment: every module sees the same SEED, so
// a replay (AGENTV_SOAK_SEED=...) regenerates the same rows and draws the same operations.

const intEnv = (name: string, fallback: number): number => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};

export const ROUNDS = intEnv('AGENTV_SOAK_ROUNDS', 1);
export const CLONES = intEnv('AGENTV_SOAK_CLONES', 3);
/** Operations per clone per round. */
export const OPS = intEnv('AGENTV_SOAK_OPS', 4);
export const SEED = intEnv('AGENTV_SOAK_SEED', 20_261_205);
