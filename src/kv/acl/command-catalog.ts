/**
 * The commands ACL rules can name: the server's command table as ACL sees it, every command and
 * subcommand (containers before their subcommands, in the table's order) and each category's.
 *
 * The engine makes it from the table and hands it to the users. ACL does not import the table
 * itself: the table holds the ACL command, which holds the users, and a module that imports its
 * own importer cannot be loaded on its own.
 */
import { aclCategories, allCategories } from "../kit/acl-categories.ts";
import { type CommandShape, commandOrSubcommand } from "../kit/command-info.ts";

export class CommandCatalog {
  /** Every command and subcommand, containers before their subcommands. */
  readonly every: readonly CommandShape[];
  private readonly byCategory: ReadonlyMap<string, readonly CommandShape[]>;

  constructor(private readonly table: ReadonlyMap<string, CommandShape>) {
    this.every = [...table.values()].flatMap((spec) => [spec, ...(spec.subcommands ?? [])]);
    this.byCategory = new Map(allCategories.map((category) => [category, this.every.filter((spec) => aclCategories(spec).includes(category))]));
  }

  /** The commands of `category` (without its "@"); undefined for a category Redis does not have. */
  category(category: string): readonly CommandShape[] | undefined {
    return this.byCategory.get(category.toLowerCase());
  }

  /** A command by name, in any case. */
  command(name: string): CommandShape | undefined {
    return this.table.get(name.toLowerCase());
  }

  /** A command, or a container's subcommand as "container|sub". */
  commandOrSubcommand(fullName: string): CommandShape | undefined {
    return commandOrSubcommand(this.table, fullName);
  }
}
