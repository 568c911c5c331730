/**
 * @module The `<Owner>` / `<Initiator>` element shared by listing and multipart documents.
 */
import { el, leaf, type Xml } from './build.js';
import { replaceUnsafeXmlChars } from './escape.js';

/** A canonical user: S3 sends an ID and (in some regions) a DisplayName. */
export interface OwnerInfo {
  id: string;
  displayName?: string;
}

/** `<name><ID>…</ID><DisplayName>…</DisplayName></name>`; nothing when `owner` is undefined. */
export function ownerXml(name: string, owner: OwnerInfo | undefined): Xml | undefined {
  if (!owner) return undefined;
  return el(
    name,
    leaf('ID', replaceUnsafeXmlChars(owner.id)),
    leaf(
      'DisplayName',
      owner.displayName === undefined ? undefined : replaceUnsafeXmlChars(owner.displayName)
    )
  );
}
