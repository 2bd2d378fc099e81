/**
 * The one place that loads `dcmjs-dimse` (a CommonJS bundle: its exports live on the default
 * export at run time, typed by the package's declarations) and silences its console logging.
 * Only its public message and association model is used (requests, responses, datasets,
 * `Association`); the network layer is ours (connection.ts, docs/decisions.md).
 */
import * as typed from "dcmjs-dimse";
import dcmjs from "dcmjs";
import { IMPLEMENTATION_CLASS_UID, IMPLEMENTATION_VERSION } from "../../dicom/mod.ts";

/** The dcmjs-dimse module. */
export const lib: typeof typed = (typed as unknown as { default?: typeof typed }).default ?? typed;

lib.log.setLevel("silent");
dcmjs.log?.setLevel?.("error");

/** dcmjs-dimse's Dataset class. */
export type LibDataset = typed.Dataset;
/** dcmjs-dimse's Association. */
export type LibAssociation = typed.association.Association;
/** dcmjs-dimse's PresentationContext. */
export type LibContext = typed.association.PresentationContext;
/** Any dcmjs-dimse request. */
export type LibRequest = typed.requests.Request;
/** Any dcmjs-dimse response. */
export type LibResponse = typed.responses.Response;
/** C-FIND request. */
export type CFindRequest = typed.requests.CFindRequest;
/** C-GET request. */
export type CGetRequest = typed.requests.CGetRequest;
/** C-MOVE request. */
export type CMoveRequest = typed.requests.CMoveRequest;
/** C-STORE request. */
export type CStoreRequest = typed.requests.CStoreRequest;
/** C-ECHO request. */
export type CEchoRequest = typed.requests.CEchoRequest;
/** C-CANCEL request. */
export type CCancelRequest = typed.requests.CCancelRequest;

/** dcmjs's DicomMetaDictionary (naturalize / denaturalize). */
export const META = dcmjs.data.DicomMetaDictionary;

// Our identity in associations and files, and a 64 KiB receive PDU (fewer, larger fragments).
lib.Implementation.setImplementationClassUid(IMPLEMENTATION_CLASS_UID);
lib.Implementation.setImplementationVersion(IMPLEMENTATION_VERSION);
lib.Implementation.setMaxPduLength(1 << 16);

/**
 * A new request of class `Request` as `new Request()` makes it, without its constructor:
 * dcmjs-dimse's requests are ts-mixer classes (command and event emitter) whose constructor
 * builds both parts and copies every property descriptor over (about 2 µs a request, one of the
 * larger costs of a C-ECHO or C-FIND through the gateway). The own properties of one instance
 * made by the constructor are copied instead; the command set is `commandSet` when given (a
 * received request's), else a copy of that instance's, and the event listeners are the new
 * request's own.
 */
export function newRequest<R extends LibRequest>(
  Request: new () => R,
  commandSet?: LibDataset,
): R {
  let template = TEMPLATES.get(Request);
  if (template === undefined) {
    const made = new Request();
    template = { request: made, keys: Reflect.ownKeys(made) };
    TEMPLATES.set(Request, template);
  }
  const request = Object.create(Request.prototype) as Record<PropertyKey, unknown>;
  const from = template.request as unknown as Record<PropertyKey, unknown>;
  const keys = template.keys;
  for (let i = 0; i < keys.length; i++) request[keys[i]] = from[keys[i]];
  const own = template.request.getCommandDataset();
  request.commandDataset = commandSet ??
    new lib.Dataset({ ...own.getElements() }, own.getTransferSyntaxUid());
  request._events = Object.create(null);
  request._eventsCount = 0;
  return request as unknown as R;
}

/** One request of each class made by its constructor, and its own keys (see newRequest). */
const TEMPLATES = new Map<new () => LibRequest, { request: LibRequest; keys: PropertyKey[] }>();
