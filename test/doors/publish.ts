// Door rows of publish.
import type { DoorGroup } from './types.js';

export const publish: DoorGroup = {
  verbs: ['publish'],
  rows: [],
  cli: [],
};
