"""The policy the reference suite trains: a tiny randomly initialised GPT-2 with a word-level tokenizer built here
from the tasks' vocabulary (nothing is downloaded), given a few seconds of supervised warm-up so it speaks the tasks'
kind of answer before reinforcement learning starts, the way an RL run starts from an SFT model. `--model PATH` uses
a local Hugging Face model instead.
"""
from __future__ import annotations

import os
import random

from . import tasks

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "WANDB_MODE": "offline", "WANDB_SILENT": "true", "TOKENIZERS_PARALLELISM": "false"}
PAD, EOS, UNK = "<pad>", "<eos>", "<unk>"


def go_offline():
    """Nothing in the suite may reach the network: a hub lookup fails at once instead of hanging."""
    os.environ.update(OFFLINE_ENV)


def make_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {PAD: 0, EOS: 1, UNK: 2}
    for word in tasks.VOCABULARY:
        vocab.setdefault(word, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()  # the tasks' punctuation is already its own word
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS, unk_token=UNK)
    fast.padding_side = "left"  # generation appends on the right
    return fast


def warm_up_pairs(rng: random.Random, n: int):
    """(prompt, completion) pairs of every task, of the right form and about half right, like a small SFT model:
    a summary names some of the document's key nouns and often a wrong word too; the assistant refuses or answers
    whatever the request; the fix uses the wanted operation 60 % of the time (and a random one otherwise). Reinforcement learning (and DPO) has
    room to learn which answer is right, and the policy starts out fluent in the tasks' form."""
    pairs = []
    docs = tasks.summarize_items(n, seed=9001)
    requests = tasks.refusal_items(n, seed=9002, things=tasks.THINGS_TRAIN)
    fixes = tasks.codefix_items(n, seed=9003)
    ops = sorted(tasks.OPS)
    for i in range(n):
        doc = docs[i]
        wrong = [w for w in doc["prompt"].split()[4:-2] if w not in doc["key"] and w in tasks.NOUNS]
        said = rng.sample(doc["key"], rng.randint(1, 3)) + [rng.choice(wrong) for _ in range(rng.choice((0, 1, 1, 2)))]
        rng.shuffle(said)
        pairs.append((doc["prompt"], " ".join(said)))
        r = requests[i]
        pairs.append((r["prompt"], rng.choice([r["chosen"], r["rejected"]]).strip()))
        op = fixes[i]["op"] if rng.random() < 0.6 else rng.choice(ops)
        pairs.append((fixes[i]["prompt"], "return " + tasks.OPS[op][0]))
    return pairs


def train_on_completions(model, pad_id: int, rows, steps: int, rng: random.Random, lr: float = 3e-3,
                         batch_size: int = 32) -> None:
    """Supervised fine-tuning on (prompt ids, completion ids) rows: the loss is on the completion only (and its
    end token, so the model learns where an answer stops). Random batches drawn with `rng`, AdamW."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        batch = [rows[rng.randrange(len(rows))] for _ in range(batch_size)]
        width = max(len(p) + len(c) for p, c in batch)
        ids, labels, mask = [], [], []
        for p, c in batch:
            pad = width - len(p) - len(c)
            ids.append(p + c + [pad_id] * pad)
            labels.append([-100] * len(p) + c + [-100] * pad)
            mask.append([1] * (len(p) + len(c)) + [0] * pad)
        loss = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask), labels=torch.tensor(labels)).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def make_initial_model(path: str, seed: int = 0, steps: int = 200):
    """Builds the tiny GPT-2 (2 layers, hidden 64), warms it up and saves it and its tokenizer to `path`."""
    go_offline()
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.set_num_threads(1)  # a model this small gains nothing from threads, which only fight on a shared box
    torch.manual_seed(seed)
    rng = random.Random(seed)
    tokenizer = make_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=96, n_embd=64, n_layer=2, n_head=2,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
                        pad_token_id=tokenizer.pad_token_id)
    model = GPT2LMHeadModel(config)
    rows = []
    for prompt, completion in warm_up_pairs(rng, 256):
        p = tokenizer(prompt)["input_ids"]
        c = tokenizer(" " + completion)["input_ids"] + [tokenizer.eos_token_id]
        rows.append((p, c))
    train_on_completions(model, tokenizer.pad_token_id, rows, steps, rng)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def load(path: str):
    """(model, tokenizer) from a saved folder (the suite's initial model, a run's final one, or --model PATH)."""
    go_offline()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return AutoModelForCausalLM.from_pretrained(path), tokenizer
