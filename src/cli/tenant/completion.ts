import type { Command } from 'commander';

interface Node {
  /** The command path, `assets list`. */
  path: string;
  words: string[];
  /** Whether its arguments are files (`upload`): the shell completes file names there. */
  files: boolean;
}

/** Every command path with the words that may follow it (subcommands, or options), from the program's own definition. */
function walk(command: Command, prefix: string[] = []): Node[] {
  const options = command.options.map((o) => o.long ?? o.short).filter((o): o is string => Boolean(o));
  const subcommands = command.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden).map((c) => c.name());
  const files = command.registeredArguments.some((a) => /file/i.test(a.name()));
  const here: Node = { path: prefix.join(' '), words: [...subcommands, ...options, '--help'], files };
  return [here, ...command.commands.flatMap((c) => walk(c, [...prefix, c.name()]))];
}

/** Options that take a value: the word after them is theirs, not a command. */
function valueOptions(command: Command): string[] {
  const own = command.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x)));
  return [...new Set([...own, ...command.commands.flatMap(valueOptions)])];
}

/**
 * A bash completion function for the program (`source <(mediaplane completion bash)`); zsh runs the same one through
 * its bashcompinit. Commands are completed from the words typed so far that are neither options nor option values;
 * the longest command path that they start with gives the candidates.
 */
export function completionScript(program: Command, shell: 'bash' | 'zsh'): string {
  const name = program.name();
  const nodes = walk(program).sort((a, b) => b.path.length - a.path.length);
  const cases = nodes
    .map((n) => {
      const pattern = n.path ? `"${n.path}"|"${n.path} "*` : '*';
      return `    ${pattern}) words="${n.words.join(' ')}"; files=${n.files ? 1 : 0} ;;`;
    })
    .join('\n');
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;
  const bash = `${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" typed="" words="" files=0 i w skip=0
  case " ${valueOptions(program).join(' ')} " in *" $prev "*) COMPREPLY=($(compgen -f -- "$cur")); return ;; esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    case " ${valueOptions(program).join(' ')} " in *" $w "*) skip=1; continue ;; esac
    [[ $w == -* ]] || typed="\${typed:+$typed }$w"
  done
  case "$typed" in
${cases}
  esac
  if [[ $cur != -* && $files == 1 ]]; then COMPREPLY=($(compgen -f -- "$cur")); return; fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F ${fn} ${name}
`;
  if (shell === 'bash')
    return `# bash completion for ${name}: source <(${name} completion bash), or save it in ~/.local/share/bash-completion/completions/${name}\n${bash}`;
  return `#compdef ${name}
# zsh completion for ${name}: source <(${name} completion zsh) in ~/.zshrc (after compinit)
autoload -U +X bashcompinit && bashcompinit
${bash}`;
}
