/** Creating accounts (sign-up and `cloud user:create`): validation, hashing, the first team. */
import { z } from "zod";
import { hashPassword } from "./auth/mod.ts";
import type { Team, User } from "./store/mod.ts";
import type { Services } from "./services.ts";

/** Shortest password accepted (NIST SP 800-63B: at least 8). */
export const MIN_PASSWORD_LENGTH = 10;

/** What an account needs. */
export const newUser = z.strictObject({
  email: z.email("must be an email address").max(254),
  name: z.string().trim().min(1, "required").max(100),
  password: z.string().min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`).max(
    1024,
  ),
  team: z.string().trim().min(1).max(100).optional(),
});

/** The input of {@link createUser}. */
export type NewUser = z.infer<typeof newUser>;

/** Creates a user and their first team (`<name>'s team` unless named). */
export async function createUser(s: Services, input: NewUser): Promise<{ user: User; team: Team }> {
  const hash = await hashPassword(input.password, s.options.passwordIterations);
  return await s.store.identity.createUser({
    email: input.email,
    name: input.name,
    passwordHash: hash,
    teamName: input.team ?? `${input.name}'s team`,
  });
}
