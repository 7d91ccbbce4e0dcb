# fish completion for tcx(1), the tensor-contraction toolkit.
#
# Nothing here lists commands or options: the functions ask the tcx being
# completed through its hidden --complete helper, whose answers come from the
# option tables in cmd/, so they stay true as commands grow.
#
#   tcx --complete                -> commands
#   tcx --complete CMD            -> CMD's long options
#   tcx --complete CMD --opt      -> enum values, or @file @dir @device @text @none
#   tcx --complete CMD --args     -> what positional arguments are (expr, file, ...)
#   tcx --complete CMD --actions  -> the words its first argument can be (logic show, ...)
#   tcx --complete CMD --options [ACTION]
#                                 -> the options CMD takes with ACTION, or given none:
#                                    short and long forms, and the global
#                                    -v, --verbose, -q, --quiet, taken after CMD too
#   tcx --complete --devices      -> device ids
#
# Installed as share/fish/vendor_completions.d/tcx.fish.

# __tcx_ask ARGS...: the lines `tcx --complete ARGS` prints, from the tcx on
# the command line being completed.
function __tcx_ask
    set -l tok (commandline -opc)
    set -l bin tcx
    set -q tok[1]; and set bin $tok[1]
    command $bin --complete $argv 2>/dev/null
end

# __tcx_files WORD [dir]: file (or directory) names for WORD; a "T=" before
# the name, as in `-i A=a.npy`, is kept.
function __tcx_files
    set -l word $argv[1]
    set -l pre ''
    if string match -qr '^[A-Za-z]=' -- $word
        set pre (string sub -l 2 -- $word)
        set word (string sub -s 3 -- $word)
    end
    if test "$argv[2]" = dir
        for f in (__fish_complete_directories $word)
            echo $pre$f
        end
    else
        for f in (__fish_complete_path $word)
            echo $pre$f
        end
    end
end

# __tcx_values CMD OPT WORD: the values of option OPT for WORD; status 1
# when OPT takes none.
function __tcx_values
    set -l what (__tcx_ask $argv[1] $argv[2])
    switch "$what"
        case '' '@none'
            return 1
        case '@file'
            __tcx_files $argv[3]
        case '@dir'
            __tcx_files $argv[3] dir
        case '@device'
            __tcx_ask --devices
        case '@*'
            # free text: nothing to offer
        case '*'
            string split ' ' -- $what
    end
    return 0
end

# __tcx_complete: every candidate for the word under the cursor.
function __tcx_complete
    set -l tok (commandline -opc)
    set -l cur (commandline -ct)
    set -l cmd ''
    set -l cmdi 0
    for i in (seq 2 (count $tok))
        if not string match -q -- '-*' $tok[$i]
            set cmd $tok[$i]
            set cmdi $i
            break
        end
    end
    if test -z "$cmd"
        if string match -q -- '-*' $cur
            printf '%s\n' --help --version --verbose --quiet
        else
            __tcx_ask
        end
        return
    end
    if test "$cmd" = help
        test (count $tok) -eq $cmdi; and __tcx_ask
        return
    end
    # the action (tcx logic show, tcx results merge): the first word after
    # the command that is one of those the command takes
    set -l acts (__tcx_ask $cmd --actions)
    set -l act
    for w in $tok[(math $cmdi + 1)..-1]
        if contains -- $w $acts
            set act $w
            break
        end
    end
    # --opt=value
    if string match -q -- '--*=*' $cur
        set -l opt (string split -m 1 = -- $cur)
        for v in (__tcx_values $cmd $opt[1] $opt[2])
            echo $opt[1]=$v
        end
        return
    end
    # the value of the option before
    set -l n (count $tok)
    if test $n -gt $cmdi; and string match -qr -- '^-.' $tok[-1]; and test "$tok[-1]" != --
        set -l vals (__tcx_values $cmd $tok[-1] $cur)
        if test $status -eq 0
            printf '%s\n' $vals
            return
        end
    end
    if string match -q -- '-*' $cur
        # the options of the action given, or of the command given none
        __tcx_ask $cmd --options $act
        return
    end
    # the action, until one is given
    if test (count $acts) -gt 0; and test -z "$act"
        printf '%s\n' $acts
        return
    end
    # positional arguments
    switch (__tcx_ask $cmd --args)
        case '*dir*'
            __tcx_files $cur dir
        case '*file*' '*logic*' '*db*' '*config*' '*yaml*'
            __tcx_files $cur
    end
end

complete -c tcx -f -a '(__tcx_complete)'
