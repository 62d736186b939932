// Door rows of publish.
import type { DoorGroup } from './types.js';

export const publish: DoorGroup = {
  verbs: ['publish'],
  rows: [
    { verb: 'publish', what: 'run is a number', call: (lib) => lib.publish({ run: 42 as never }), option: 'run' },
    { verb: 'publish', what: 'run is missing', call: (lib) => lib.publish({} as never), option: 'run' },
    { verb: 'publish', what: 'push is a string', call: (lib) => lib.publish({ run: 'r', push: 'yes' as never }), option: 'push' },
    { verb: 'publish', what: 'allowInvalid is a number', call: (lib) => lib.publish({ run: 'r', allowInvalid: 1 as never }), option: 'allowInvalid' },
    { verb: 'publish', what: 'onStep is not a function', call: (lib) => lib.publish({ run: 'r', onStep: 'log' as never }), option: 'onStep' },
    { verb: 'publish', what: 'a misspelt option', call: (lib) => lib.publish({ run: 'r', requirePsuh: true } as never), option: 'requirePsuh' },
    {
      verb: 'publish',
      what: 'requirePush with push: false (a push required and forbidden)',
      call: (lib) => lib.publish({ run: 'r', push: false, requirePush: true }),
      option: 'requirePush',
    },
  ],
  cli: [
    { argv: ['publish'], names: 'run' },
    { argv: ['publish', 'nowhere', '--no-push', '--require-push'], names: '--require-push' },
    { argv: ['publish', 'nowhere', '--message'], names: '--message' },
  ],
};
