/** Why a folder is not a readable segment: thrown as a plain Error; callers word it for the user. */
export class SegmentFormatError extends Error {
  override readonly name = 'SegmentFormatError';
}
