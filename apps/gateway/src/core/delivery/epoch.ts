/**
 * The history epoch (part of every position, so a client can tell positions of a lost history
 * apart), with its one loader: read once when first needed, again on every broker reconnect (a
 * Redis that lost its data has a new one). Every other module asks it here.
 */
import type { Logger } from '@wirestream/telemetry';
import type { HistoryReader } from '../../broker/broker.js';

export interface Epoch {
  readonly history: HistoryReader | undefined;
  readonly logger: Logger;
  /** The epoch known now; undefined before the first load (or without history). */
  current: string | undefined;
  /** A first load in flight, shared by whoever asks meanwhile. */
  loading: Promise<string | undefined> | undefined;
}

export function createEpoch(history: HistoryReader | undefined, logger: Logger): Epoch {
  return { history, logger, current: undefined, loading: undefined };
}

export function currentEpoch(epoch: Epoch): string | undefined {
  return epoch.current;
}

/** The epoch, loaded first if it is not known yet (undefined without history). A failed load rejects and is tried again by the next ask. */
export async function knownEpoch(epoch: Epoch): Promise<string | undefined> {
  const { history } = epoch;
  if (epoch.current !== undefined || history === undefined) return epoch.current;
  epoch.loading ??= history.loadEpoch().finally(() => (epoch.loading = undefined));
  const loaded = await epoch.loading;
  epoch.current ??= loaded;
  return epoch.current;
}

/** The broker is (again) connected: read the epoch anew and say so when it changed. */
export async function reloadEpoch(epoch: Epoch): Promise<void> {
  const { history } = epoch;
  if (history === undefined) return;
  const previous = epoch.current;
  epoch.current = await history.loadEpoch();
  if (previous !== undefined && previous !== epoch.current) epoch.logger.warn({ previous, epoch: epoch.current }, 'history epoch changed: Redis lost its history');
}
