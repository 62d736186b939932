/**
 * AgentV's genesis: an empty tree committed with a fixed message, identity and date, so every
 * client that starts `agentv/results/v1` (or the artifacts branch) starts it at this same commit
 * and the two tools' histories join instead of running side by side from different roots. Every
 * branch we write starts here, which is also how a branch of ours is told from one a user works on.
 */
export const GENESIS_COMMIT = 'ad59c1e92bfd55877f9b51251d51cde0bb97dfa9';
export const GENESIS_MESSAGE = 'chore(results): initialize AgentV results branch';
