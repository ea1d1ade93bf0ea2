/**
 * What the /settings page needs from crm's user and token store. The page signs a person in with
 * a username and password and lets them manage their own API tokens; it never sees a password
 * hash or a stored token hash.
 */

export interface SignedInUser {
  userId: number;
  username: string;
}

/** An API token as its owner may see it: never its secret. */
export interface TokenListing {
  id: number;
  name: string;
  /** The token's first characters, kept in clear to tell tokens apart. */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface SettingsAccounts {
  /**
   * The user with this username and password, or null. An unknown user and a wrong password take
   * the same time and give the same answer, so the form does not reveal who has an account.
   */
  signIn(username: string, password: string): Promise<SignedInUser | null>;
  /** The user's tokens, newest first, revoked ones included. */
  listTokens(userId: number): Promise<TokenListing[]>;
  /** Creates a token for the user; the secret is returned this once and stored only hashed. */
  createToken(userId: number, name: string): Promise<{ id: number; token: string }>;
  /** Revokes one of the user's own tokens; false when the user has no such live token. */
  revokeToken(userId: number, tokenId: number): Promise<boolean>;
}
