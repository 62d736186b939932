// Which operation each clone runs next. Operations are dealt from shuffled decks of the weighted
// kinds rather than drawn independently, so even the small CI size draws every kind
// (16 cards: 3 clones x 3 operations x 2 rounds go through a whole deck).
import type { Clone } from './model.js';
import { opFeedback, opGrow, opKill, opNew, opSync, opTag, opWip } from './operations.js';
import type { Soak } from './soak.js';

export type Op = (s: Soak, c: Clone, r: () => number) => Promise<void>;

export interface Deck {
  /** Cards in one whole deck: a soak that deals at least this many ran every kind. */
  size: number;
  draw(): Op;
}

function weightedKinds(): Op[] {
  const kinds: Op[] = [];
  const weigh = (n: number, f: Op) => {
    for (let i = 0; i < n; i++) kinds.push(f);
  };
  weigh(3, (s, c, r) => opNew(s, c, r));
  weigh(2, (s, c, r) => opGrow(s, c, r, false));
  weigh(2, (s, c, r) => opGrow(s, c, r, true));
  weigh(2, (s, c, r) => opTag(s, c, r));
  weigh(2, (s, c, r) => opFeedback(s, c, r));
  weigh(2, (s, c, r) => opWip(s, c, r));
  weigh(1, (s, c) => opSync(s, c));
  weigh(2, (s, c, r) => opKill(s, c, r));
  return kinds;
}

/** A deck shuffled with `random` each time it runs out. */
export function shuffledDeck(random: () => number): Deck {
  const kinds = weightedKinds();
  let deck: Op[] = [];
  const draw = (): Op => {
    if (deck.length === 0) {
      deck = [...kinds];
      for (let i = deck.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [deck[i], deck[j]] = [deck[j]!, deck[i]!];
      }
    }
    return deck.pop()!;
  };
  return { size: kinds.length, draw };
}
