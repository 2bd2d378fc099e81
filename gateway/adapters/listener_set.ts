/**
 * The shape every kind of listener set has across configuration reloads: the HTTP and HTTP/3
 * listeners of the data plane (runtime/http_listeners.ts) and the DIMSE listeners of `dicom_scp`
 * endpoints (endpoints/dicom_scp/listeners.ts). A reload calls `sync` with the new configuration
 * before the runtime swap and `closeStale` after it.
 */

/** Listeners kept across reloads, started and retired from what a configuration asks for. */
export interface ListenerSet<Wanted> {
  /** Start what `wanted` needs and is not running; on failure, nothing new is left running. */
  sync(wanted: Wanted, checkPorts?: boolean): Promise<void>;
  /** Retire what `wanted` no longer needs (in-flight work finishes). */
  closeStale(wanted: Wanted): Promise<void>;
}
